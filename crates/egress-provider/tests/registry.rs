//! Building providers from configuration by `type`, and strict type-specific
//! settings next to the common fields.

mod support;

use std::sync::Arc;

use egress_provider::reference::{InMemoryFactory, InMemoryProvider};
use egress_provider::{
    ConfigError, FieldErrors, NoSettings, Problem, Provider, ProviderEntry, ProviderFactory,
    ProviderRegistry, ProvidersConfig, RegistryError,
};
use serde::Deserialize;
use support::{assert_at, invalid};

/// Settings shaped like a KVM provider's, with `deny_unknown_fields`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HostSettings {
    host: String,
    #[serde(default = "default_port")]
    port: u16,
    #[serde(default)]
    tls: Option<Tls>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Tls {
    ca: String,
}

fn default_port() -> u16 {
    22
}

/// A factory that checks one thing itself and builds in-memory providers.
struct HostFactory;

impl ProviderFactory for HostFactory {
    type Settings = HostSettings;

    fn build(
        &self,
        entry: &ProviderEntry,
        settings: HostSettings,
    ) -> Result<Arc<dyn Provider>, FieldErrors> {
        let mut errors = FieldErrors::new();
        if settings.host.contains('/') {
            errors.push(
                entry.field_error("host", Problem::invalid("must be a host name, not a URL")),
            );
        }
        if settings.port == 0 {
            errors.push(entry.field_error("port", Problem::invalid("must not be 0")));
        }
        if let Some(tls) = &settings.tls {
            if !tls.ca.starts_with('/') {
                errors.push(
                    entry.field_error("tls.ca", Problem::invalid("must be an absolute path")),
                );
            }
        }
        errors.into_result(())?;
        Ok(Arc::new(
            InMemoryProvider::new(entry.name.as_str()).with_images(entry.images.keys().cloned()),
        ))
    }
}

/// Settings without `deny_unknown_fields`: the registry is strict anyway.
#[derive(Debug, Deserialize)]
struct LaxSettings {
    #[allow(dead_code)] // read by serde; its presence is what is tested
    zone: Option<String>,
}

struct LaxFactory;

impl ProviderFactory for LaxFactory {
    type Settings = LaxSettings;

    fn build(
        &self,
        entry: &ProviderEntry,
        _: LaxSettings,
    ) -> Result<Arc<dyn Provider>, FieldErrors> {
        Ok(Arc::new(InMemoryProvider::new(entry.name.as_str())))
    }
}

struct PlainFactory;

impl ProviderFactory for PlainFactory {
    type Settings = NoSettings;

    fn build(
        &self,
        entry: &ProviderEntry,
        _: NoSettings,
    ) -> Result<Arc<dyn Provider>, FieldErrors> {
        Ok(Arc::new(InMemoryProvider::new(entry.name.as_str())))
    }
}

/// A factory that ignores the entry's name: a bug the registry catches.
struct MisnamingFactory;

impl ProviderFactory for MisnamingFactory {
    type Settings = NoSettings;

    fn build(&self, _: &ProviderEntry, _: NoSettings) -> Result<Arc<dyn Provider>, FieldErrors> {
        Ok(Arc::new(InMemoryProvider::new("something-else")))
    }
}

fn registry() -> ProviderRegistry {
    let mut r = ProviderRegistry::new();
    r.register("host", HostFactory)
        .unwrap()
        .register("lax", LaxFactory)
        .unwrap()
        .register("plain", PlainFactory)
        .unwrap()
        .register("misnaming", MisnamingFactory)
        .unwrap()
        .register(InMemoryProvider::TYPE, InMemoryFactory)
        .unwrap();
    r
}

fn entry(name: &str, ty: &str, extra: &str) -> String {
    format!(
        "  - name: {name}\n    type: {ty}\n    allow_unverified_images: true\n    images:\n      d13: {{url: 'https://x.example/d13', format: raw}}\n{extra}"
    )
}

fn build(entries: &[String]) -> Result<egress_provider::ProviderSet, ConfigError> {
    let doc = format!("providers:\n{}", entries.concat());
    let config = ProvidersConfig::from_yaml_str(&doc).expect("common part is valid");
    registry().build(&config)
}

#[track_caller]
fn build_errors(entries: &[String]) -> FieldErrors {
    invalid(build(entries))
}

#[test]
fn builds_several_entries_of_one_type() {
    let set = build(&[
        entry("kvm-a", "host", "    host: a.example\n"),
        entry(
            "kvm-b",
            "host",
            "    host: b.example\n    port: 2222\n    tls: {ca: /etc/ca.pem}\n",
        ),
        entry("lab", "in-memory", "    boot_observations: 0\n"),
    ])
    .expect("valid");
    assert_eq!(set.len(), 3);
    let names: Vec<&str> = set
        .names()
        .map(egress_provider::Identifier::as_str)
        .collect();
    assert_eq!(names, ["kvm-a", "kvm-b", "lab"]);
    assert_eq!(set.get("kvm-b").unwrap().name(), "kvm-b");
    assert!(set.get("nope").is_none());
}

#[test]
fn unknown_type_names_the_registered_ones() {
    let errors = build_errors(&[entry("a", "vmware", "")]);
    match assert_at(&errors, "providers[0].type") {
        Problem::UnknownType { value, known } => {
            assert_eq!(value, "vmware");
            assert_eq!(known, &["host", "in-memory", "lax", "misnaming", "plain"]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unknown_type_specific_fields_are_errors() {
    // `prot` is a typo next to the common fields; `imgaes` a typo of a common
    // field; `tls.cert` is nested. All are reported, with entry paths.
    let errors = build_errors(&[entry(
        "a",
        "host",
        "    host: a.example\n    prot: 22\n    imgaes: {}\n",
    )]);
    // serde stops at the first unknown key of a `deny_unknown_fields` type,
    // so one of the two is reported, as a parse error naming the field.
    let first = errors.iter().next().expect("an error");
    assert!(
        ["providers[0].prot", "providers[0].imgaes"].contains(&first.path.as_str()),
        "{errors}"
    );
    assert!(errors.to_string().contains("unknown field `"), "{errors}");

    let errors = build_errors(&[entry(
        "a",
        "host",
        "    host: a.example\n    tls: {ca: /ca.pem, cert: /c.pem}\n",
    )]);
    assert!(errors.at("providers[0].tls.cert").is_some(), "{errors}");
}

#[test]
fn lax_settings_types_are_strict_too() {
    // Without deny_unknown_fields serde would drop these silently; the
    // registry reports every one.
    let errors = build_errors(&[entry(
        "a",
        "lax",
        "    zone: z1\n    zoen: z2\n    nested: {x: 1}\n",
    )]);
    assert!(matches!(
        assert_at(&errors, "providers[0].zoen"),
        Problem::UnknownField
    ));
    assert!(matches!(
        assert_at(&errors, "providers[0].nested"),
        Problem::UnknownField
    ));
    assert_eq!(errors.len(), 2, "{errors}");
    build(&[entry("a", "lax", "    zone: z1\n")]).expect("known key only");
}

#[test]
fn no_settings_rejects_any_extra_key() {
    build(&[entry("a", "plain", "")]).expect("no extra keys");
    let errors = build_errors(&[entry("a", "plain", "    host: x\n")]);
    assert!(errors.at("providers[0].host").is_some(), "{errors}");
}

#[test]
fn settings_type_errors_and_missing_fields_carry_the_entry_path() {
    let errors = build_errors(&[entry("a", "host", "    host: a.example\n    port: many\n")]);
    assert!(matches!(
        assert_at(&errors, "providers[0].port"),
        Problem::Parse { .. }
    ));
    assert!(errors.to_string().contains("invalid type"), "{errors}");

    let errors = build_errors(&[entry("a", "host", "")]);
    let text = errors.to_string();
    assert!(text.starts_with("providers[0]: cannot be read"), "{text}");
    assert!(text.contains("missing field `host`"), "{text}");
}

#[test]
fn factory_checks_are_reported_with_paths_across_entries() {
    let errors = build_errors(&[
        entry("a", "host", "    host: https://a.example/\n    port: 0\n"),
        entry(
            "b",
            "host",
            "    host: b.example\n    tls: {ca: relative.pem}\n",
        ),
        entry("c", "nope", ""),
    ]);
    assert_eq!(errors.len(), 4, "{errors}");
    assert!(
        assert_at(&errors, "providers[0].host")
            .to_string()
            .contains("not a URL")
    );
    assert_at(&errors, "providers[0].port");
    assert!(
        assert_at(&errors, "providers[1].tls.ca")
            .to_string()
            .contains("absolute")
    );
    assert_at(&errors, "providers[2].type");
}

#[test]
fn provider_must_carry_the_entry_name() {
    let errors = build_errors(&[entry("a", "misnaming", "")]);
    assert!(
        assert_at(&errors, "providers[0].name")
            .to_string()
            .contains("must use the entry's name"),
        "{errors}"
    );
}

#[test]
fn registration_rules() {
    let mut r = ProviderRegistry::new();
    r.register("kvm", PlainFactory).unwrap();
    assert_eq!(
        r.register("kvm", PlainFactory).err(),
        Some(RegistryError::DuplicateType("kvm".into()))
    );
    assert!(matches!(
        r.register("KVM", PlainFactory).err(),
        Some(RegistryError::InvalidType { .. })
    ));
    assert!(r.contains("kvm"));
    assert_eq!(format!("{r:?}"), "ProviderRegistry { types: [\"kvm\"] }");
}

#[test]
fn entry_settings_helper_is_usable_directly() {
    let config = ProvidersConfig::from_yaml_str(&format!(
        "providers:\n{}",
        entry("a", "host", "    host: a.example\n")
    ))
    .unwrap();
    let s: HostSettings = config.providers[0].settings().unwrap();
    assert_eq!(s.host, "a.example");
    assert_eq!(s.port, 22);
    assert!(s.tls.is_none());
}

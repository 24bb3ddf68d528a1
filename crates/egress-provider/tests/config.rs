//! Loading and validating the provider section.

mod support;

use egress_provider::{
    ConfigError, FieldErrors, ImageFormat, Problem, ProvidersConfig, Sha256Digest,
};
use support::{assert_at, invalid};

const SHA: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

#[track_caller]
fn yaml_errors(text: &str) -> FieldErrors {
    invalid(ProvidersConfig::from_yaml_str(text))
}

#[track_caller]
fn json_errors(text: &str) -> FieldErrors {
    invalid(ProvidersConfig::from_json_str(text))
}

fn good_yaml() -> String {
    format!(
        "
providers:
  - name: kvm-a
    type: kvm
    host: kvm-a.example
    port: 22
    images:
      debian-13:
        url: https://images.example/debian-13.qcow2
        sha256: {SHA}
        format: qcow2
      alpine:
        url: http://images.example/alpine.raw
        sha256: {upper}
        format: raw
  - name: kvm-b
    type: kvm
    allow_unverified_images: true
    host: kvm-b.example
    images:
      debian-13:
        url: https://images.example/debian-13.qcow2
        format: qcow2
",
        upper = SHA.to_uppercase()
    )
}

#[test]
fn loads_valid_yaml() {
    let cfg = ProvidersConfig::from_yaml_str(&good_yaml()).expect("valid");
    assert_eq!(cfg.providers.len(), 2);
    let a = cfg.entry("kvm-a").expect("kvm-a");
    assert_eq!(a.provider_type, "kvm");
    assert_eq!(a.path(), "providers[0]");
    assert!(!a.allow_unverified_images);
    let d13 = a.image("debian-13").expect("image");
    assert_eq!(d13.format, ImageFormat::Qcow2);
    assert_eq!(d13.url.as_str(), "https://images.example/debian-13.qcow2");
    assert_eq!(d13.sha256, Sha256Digest::from_hex(SHA));
    // Uppercase hex is accepted and normalized.
    assert_eq!(a.image("alpine").unwrap().sha256.unwrap().to_string(), SHA);
    // Type-specific keys are kept for the factory, common ones are not.
    assert_eq!(a.settings.len(), 2);
    assert_eq!(a.settings["host"], "kvm-a.example");
    assert_eq!(a.settings["port"], 22);

    let b = cfg.entry("kvm-b").unwrap();
    assert!(b.allow_unverified_images);
    assert_eq!(b.image("debian-13").unwrap().sha256, None);
    assert_eq!(b.field_path("host"), "providers[1].host");
}

#[test]
fn loads_equivalent_json() {
    let json = format!(
        r#"{{"providers": [{{
            "name": "kvm-a", "type": "kvm", "host": "h", "tls": {{"ca": "/etc/ca.pem"}},
            "images": {{"debian-13": {{"url": "https://x.example/d.qcow2", "sha256": "{SHA}", "format": "qcow2"}}}}
        }}]}}"#
    );
    let cfg = ProvidersConfig::from_json_str(&json).expect("valid");
    let a = &cfg.providers[0];
    assert_eq!(a.name, "kvm-a");
    assert_eq!(a.settings["tls"]["ca"], "/etc/ca.pem");

    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(ProvidersConfig::from_value(&value).unwrap(), cfg);
}

#[test]
fn reports_every_problem_with_its_path() {
    let errors = yaml_errors(
        r#"
providers:
  - name: kvm-a
    type: kvm
    images:
      debian-13:
        url: ftp://images.example/d.qcow2
        sha256: abc
        format: vmdk
      Debian_14:
        url: "not a url"
        format: raw
  - name: kvm-a
    type: KVM
    images: {}
  - type: kvm
    images:
      x:
        url: https://x.example/x
        sha256: "SHA"
        format: raw
        checksum: also-wrong
  - name: ""
    images:
      y: {url: "https://y.example/y", sha256: "", format: qcow2}
"#,
    );
    assert!(matches!(
        assert_at(&errors, "providers[0].images.debian-13.url"),
        Problem::UnsupportedScheme { scheme } if scheme == "ftp"
    ));
    assert!(matches!(
        assert_at(&errors, "providers[0].images.debian-13.sha256"),
        Problem::BadSha256 { value } if value == "abc"
    ));
    assert!(matches!(
        assert_at(&errors, "providers[0].images.debian-13.format"),
        Problem::UnsupportedFormat { value } if value == "vmdk"
    ));
    assert!(matches!(
        assert_at(&errors, "providers[0].images.Debian_14"),
        Problem::NotIdentifier { value, .. } if value == "Debian_14"
    ));
    assert!(matches!(
        assert_at(&errors, "providers[0].images.Debian_14.url"),
        Problem::BadUrl { .. }
    ));
    assert!(matches!(
        assert_at(&errors, "providers[0].images.Debian_14.sha256"),
        Problem::MissingSha256
    ));
    assert!(matches!(
        assert_at(&errors, "providers[1].name"),
        Problem::Duplicate { first, .. } if first == "providers[0].name"
    ));
    assert!(matches!(
        assert_at(&errors, "providers[1].type"),
        Problem::NotIdentifier { .. }
    ));
    assert!(matches!(
        assert_at(&errors, "providers[1].images"),
        Problem::Empty
    ));
    assert!(matches!(
        assert_at(&errors, "providers[2].name"),
        Problem::Missing
    ));
    assert!(matches!(
        assert_at(&errors, "providers[2].images.x.sha256"),
        Problem::BadSha256 { .. }
    ));
    assert!(matches!(
        assert_at(&errors, "providers[2].images.x.checksum"),
        Problem::UnknownField
    ));
    assert!(matches!(
        assert_at(&errors, "providers[3].name"),
        Problem::Empty
    ));
    assert!(matches!(
        assert_at(&errors, "providers[3].type"),
        Problem::Missing
    ));
    assert!(matches!(
        assert_at(&errors, "providers[3].images.y.sha256"),
        Problem::BadSha256 { .. }
    ));
    assert_eq!(errors.len(), 15, "{errors}");

    // Display lists each problem with its path; good enough for an operator log.
    let text = ConfigError::Invalid(errors).to_string();
    assert!(
        text.starts_with("invalid provider configuration: 15 problems:"),
        "{text}"
    );
    assert!(
        text.contains(
            "providers[0].images.debian-13.sha256: \"abc\" is not a sha256 digest (64 hexadecimal digits"
        ),
        "{text}"
    );
    assert!(
        text.contains("providers[0].images.Debian_14: \"Debian_14\" is not a valid identifier"),
        "{text}"
    );
    assert!(text.contains("contains 'D' at byte 0"), "{text}");
    assert!(
        text.contains("providers[0].images.Debian_14.url: \"not a url\" is not a valid URL: relative URL without a base"),
        "{text}"
    );
}

#[test]
fn names_longer_than_63_are_rejected() {
    let long = "a".repeat(64);
    let errors = yaml_errors(&format!(
        "providers:\n  - name: {long}\n    type: kvm\n    images:\n      {long}: {{url: 'https://x.example/', sha256: '{SHA}', format: raw}}\n"
    ));
    assert!(matches!(
        assert_at(&errors, "providers[0].name"),
        Problem::NotIdentifier { .. }
    ));
    assert!(
        errors.at(&format!("providers[0].images.{long}")).is_some(),
        "{errors}"
    );
}

#[test]
fn sha256_is_required_unless_opted_out() {
    let doc = |allow: &str| {
        format!(
            "providers:\n  - name: a\n    type: kvm\n{allow}    images:\n      d: {{url: 'https://x.example/d', format: raw}}\n"
        )
    };
    let errors = yaml_errors(&doc(""));
    let problem = assert_at(&errors, "providers[0].images.d.sha256");
    assert!(matches!(problem, Problem::MissingSha256));
    assert!(
        problem
            .to_string()
            .contains("allow_unverified_images: true")
    );

    // An explicit `false` is the same as leaving it out.
    yaml_errors(&doc("    allow_unverified_images: false\n"));
    ProvidersConfig::from_yaml_str(&doc("    allow_unverified_images: true\n")).expect("opted out");
}

#[test]
fn unknown_top_level_and_image_fields_are_errors() {
    let errors = yaml_errors(&format!(
        "providers:\n  - name: a\n    type: kvm\n    images:\n      d: {{url: 'https://x.example/d', sha256: '{SHA}', format: raw, size: 3}}\nprovider: oops\n"
    ));
    assert!(matches!(
        assert_at(&errors, "provider"),
        Problem::UnknownField
    ));
    assert!(matches!(
        assert_at(&errors, "providers[0].images.d.size"),
        Problem::UnknownField
    ));
}

#[test]
fn missing_or_empty_providers() {
    assert!(matches!(
        assert_at(&yaml_errors("{}"), "providers"),
        Problem::Missing
    ));
    assert!(matches!(
        assert_at(&yaml_errors("providers: []"), "providers"),
        Problem::Empty
    ));
    assert!(matches!(
        assert_at(&json_errors(r#"{"providers": []}"#), "providers"),
        Problem::Empty
    ));
}

#[test]
fn yaml_syntax_and_shape_errors_name_the_place() {
    // Wrong shape: a list where a mapping belongs.
    let errors = yaml_errors("providers:\n  - name: a\n    images: [1, 2]\n");
    let e = errors
        .at("providers[0].images")
        .unwrap_or_else(|| panic!("{errors}"));
    assert!(matches!(e.problem, Problem::Parse { .. }));
    let text = errors.to_string();
    assert!(text.contains("line 3"), "YAML errors keep the line: {text}");

    // Broken syntax.
    let errors = yaml_errors("providers: [\n");
    assert!(matches!(
        errors.iter().next().unwrap().problem,
        Problem::Parse { .. }
    ));

    // Empty document.
    let errors = yaml_errors("");
    assert_eq!(errors.len(), 1, "{errors}");
}

#[test]
fn duplicate_keys_are_errors_in_both_formats() {
    let errors = yaml_errors(&format!(
        "providers:\n  - name: a\n    type: kvm\n    images:\n      d: {{url: 'https://x.example/d', sha256: '{SHA}', format: raw}}\n      d: {{url: 'https://x.example/e', sha256: '{SHA}', format: raw}}\n"
    ));
    assert!(errors.to_string().contains("duplicate"), "{errors}");

    for json in [
        r#"{"providers": [{"name": "a", "name": "b"}]}"#,
        r#"{"providers": [{"name": "a", "type": "kvm", "images": {"d": {"url": "https://x.example/", "format": "raw"}, "d": {"url": "https://x.example/", "format": "raw"}}}]}"#,
        r#"{"providers": [{"name": "a", "type": "kvm", "host": "x", "host": "y"}]}"#,
        r#"{"providers": [{"name": "a", "type": "kvm", "tls": {"ca": "x", "ca": "y"}}]}"#,
        r#"{"providers": [], "providers": []}"#,
    ] {
        let errors = json_errors(json);
        assert!(
            errors.to_string().contains("duplicate field"),
            "{json}: {errors}"
        );
    }
}

#[test]
fn json_type_errors_name_the_path() {
    let errors = json_errors(
        r#"{"providers": [{"name": "a", "type": "kvm", "images": {"d": {"url": 5, "format": "raw"}}}]}"#,
    );
    let e = errors
        .at("providers[0].images.d.url")
        .unwrap_or_else(|| panic!("{errors}"));
    assert!(matches!(e.problem, Problem::Parse { .. }));
    assert!(
        errors.to_string().contains("invalid type: integer `5`"),
        "{errors}"
    );

    let errors = json_errors(r#"{"providers": []} trailing"#);
    assert!(matches!(
        errors.iter().next().unwrap().problem,
        Problem::Parse { .. }
    ));
}

#[test]
fn yaml_keeps_string_scalars_as_written() {
    // YAML would read these as a boolean and a number if asked for "any"
    // value; the common fields ask for strings, so the operator's text stays.
    let digits = "1".repeat(64);
    let cfg = ProvidersConfig::from_yaml_str(&format!(
        "providers:\n  - name: no\n    type: kvm\n    images:\n      '13': {{url: 'https://x.example/', sha256: {digits}, format: raw}}\n"
    ))
    .expect("valid");
    assert_eq!(cfg.providers[0].name, "no");
    assert_eq!(
        cfg.providers[0]
            .image("13")
            .unwrap()
            .sha256
            .unwrap()
            .to_string(),
        digits
    );
}

#[test]
fn from_file_picks_the_format_by_extension() {
    let dir = std::env::temp_dir().join(format!("egress-provider-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let yaml = dir.join("providers.yaml");
    std::fs::write(&yaml, good_yaml()).unwrap();
    assert_eq!(
        ProvidersConfig::from_file(&yaml).unwrap().providers.len(),
        2
    );

    let toml = dir.join("providers.toml");
    assert!(matches!(
        ProvidersConfig::from_file(&toml),
        Err(ConfigError::UnknownFormat { .. })
    ));
    let missing = dir.join("missing.yml");
    let err = ProvidersConfig::from_file(&missing).unwrap_err();
    assert!(matches!(err, ConfigError::Read { .. }));
    assert!(
        std::error::Error::source(&err).is_some(),
        "I/O cause is kept"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An image URL's user, password and query token appear in no error and no `Debug` output
/// of the configuration: a URL that does not parse is shown redacted, one that does is
/// printed redacted.
#[test]
fn image_url_credentials_are_never_shown() {
    let secrets = ["hunter2", "s3cret", "ops:"];
    let errors = yaml_errors(&format!(
        "
providers:
  - name: kvm-a
    type: kvm
    images:
      bad:
        url: https://ops:hunter2@images.example:99999/x.raw?token=s3cret
        sha256: {SHA}
        format: raw
"
    ));
    let shown = format!("{errors} {errors:?}");
    for s in secrets {
        assert!(!shown.contains(s), "{s:?} shown in a config error: {shown}");
    }
    assert!(shown.contains("images.example"), "{shown}");
    let cfg = ProvidersConfig::from_yaml_str(&format!(
        "
providers:
  - name: kvm-a
    type: kvm
    images:
      good:
        url: https://ops:hunter2@images.example/x.raw?token=s3cret
        sha256: {SHA}
        format: raw
"
    ))
    .unwrap();
    let shown = format!("{cfg:?}");
    for s in secrets {
        assert!(
            !shown.contains(s),
            "{s:?} in the configuration's Debug: {shown}"
        );
    }
    // The URL itself is intact for the fetch.
    let url = &cfg.providers[0].images.values().next().unwrap().url;
    assert_eq!(url.password(), Some("hunter2"));
}

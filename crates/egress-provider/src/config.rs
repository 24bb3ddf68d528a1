//! The operator's provider section: a list of entries, each with a name, a
//! `type`, its images and type-specific settings.
//!
//! ```yaml
//! providers:
//!   - name: kvm-a                 # identifier; unique
//!     type: kvm2                  # picks the factory in the registry (the KVM provider)
//!     images:
//!       debian-13:                # identifier; the CreateSpec's image key
//!         url: https://images.example/debian-13.qcow2
//!         sha256: 5f2b...         # 64 hex digits; required unless opted out
//!         format: qcow2           # raw | qcow2
//!     uri: qemu+ssh://ops@kvm-a.example/system   # everything else is type-specific
//!     pool: default
//!   - name: lab
//!     type: kvm2
//!     allow_unverified_images: true   # opt out of checksums, per entry
//!     images: { ... }
//!     uri: qemu:///system
//!     pool: default
//! ```
//!
//! Loading validates everything this crate owns and reports **all** problems
//! with field paths such as `providers[1].images.debian-13.sha256`. Unknown
//! keys at the top level and inside images are errors here. Type-specific
//! keys are checked when the [`ProviderRegistry`](crate::ProviderRegistry)
//! builds the entry: the factory's settings type owns that schema, and any
//! key it does not read is reported as [`Problem::UnknownField`] (a typo in a
//! common field, such as `imgaes`, lands there too).

mod raw;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use url::Url;

use crate::field::{FieldError, FieldErrors, Problem, join_index, join_key};
use crate::identifier::Identifier;
use raw::{RawDocument, RawEntry, RawImage};

/// The validated provider section.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ProvidersConfig {
    /// The entries, in document order.
    pub providers: Vec<ProviderEntry>,
}

/// One provider entry, e.g. one KVM host.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ProviderEntry {
    /// The entry's unique name; providers report it as their
    /// [`name`](crate::Provider::name).
    pub name: Identifier,
    /// The entry's `type`, which selects its factory.
    pub provider_type: Identifier,
    /// The images this entry can boot, by key.
    pub images: BTreeMap<Identifier, ImageSource>,
    /// Whether images may omit `sha256`. Off unless the entry says
    /// `allow_unverified_images: true`.
    pub allow_unverified_images: bool,
    /// Every other key of the entry, for the factory to read with
    /// [`settings`](Self::settings).
    pub settings: Map<String, Value>,
    index: usize,
}

/// Where an image comes from and how to check it. `Debug` shows the URL without its
/// userinfo and query ([`redact_url`](crate::redact_url)).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImageSource {
    /// An `http` or `https` URL.
    pub url: Url,
    /// The expected digest. `None` only if the entry allows unverified images.
    pub sha256: Option<Sha256Digest>,
    /// The disk format of the downloaded file.
    pub format: ImageFormat,
}

impl fmt::Debug for ImageSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ImageSource")
            .field("url", &crate::redact_url(self.url.as_str()))
            .field("sha256", &self.sha256)
            .field("format", &self.format)
            .finish()
    }
}

impl ImageSource {
    /// An image source built in code (the loader builds them from configuration). The URL
    /// scheme is not checked here; configuration loading checks it.
    pub fn new(url: Url, sha256: Option<Sha256Digest>, format: ImageFormat) -> Self {
        Self {
            url,
            sha256,
            format,
        }
    }
}

/// The disk format of an image file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ImageFormat {
    /// A raw disk image.
    Raw,
    /// A QEMU copy-on-write v2 image.
    Qcow2,
}

impl ImageFormat {
    /// The name used in configuration: `raw` or `qcow2`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Raw => "raw",
            Self::Qcow2 => "qcow2",
        }
    }

    /// Parses a configuration name; exact and lowercase.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "raw" => Some(Self::Raw),
            "qcow2" => Some(Self::Qcow2),
            _ => None,
        }
    }
}

impl fmt::Display for ImageFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A SHA-256 digest.
///
/// Written as 64 hexadecimal digits in either case; displayed in lowercase.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sha256Digest([u8; 32]);

impl Sha256Digest {
    /// Parses 64 hexadecimal digits.
    pub fn from_hex(hex: &str) -> Option<Self> {
        let bytes = hex.as_bytes();
        if bytes.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (slot, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
            let hi = char::from(pair[0]).to_digit(16)?;
            let lo = char::from(pair[1]).to_digit(16)?;
            *slot = (hi * 16 + lo) as u8;
        }
        Some(Self(out))
    }

    /// Wraps raw digest bytes, e.g. a freshly computed hash to compare.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The digest bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Display for Sha256Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Sha256Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sha256Digest({self})")
    }
}

/// The document formats a provider section can be loaded from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigFormat {
    /// YAML 1.2, single document.
    Yaml,
    /// JSON.
    Json,
}

impl ConfigFormat {
    /// The format a file name's extension implies: `.yaml`/`.yml` or `.json`.
    pub fn from_path(path: &Path) -> Option<Self> {
        match path.extension()?.to_str()? {
            "yaml" | "yml" => Some(Self::Yaml),
            "json" => Some(Self::Json),
            _ => None,
        }
    }
}

impl fmt::Display for ConfigFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Yaml => "YAML",
            Self::Json => "JSON",
        })
    }
}

/// Why a provider section could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read provider configuration {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file name does not say which format it is in.
    #[error(
        "cannot tell the format of provider configuration {}: name it *.yaml, *.yml or *.json",
        path.display()
    )]
    UnknownFormat {
        /// The file.
        path: PathBuf,
    },
    /// The document is malformed or breaks a rule. Lists every problem with
    /// its field path; each [`FieldError`] keeps its own source chain.
    #[error("invalid provider configuration: {0}")]
    Invalid(FieldErrors),
}

impl ConfigError {
    /// The field errors, if this is [`ConfigError::Invalid`].
    pub fn field_errors(&self) -> Option<&FieldErrors> {
        match self {
            Self::Invalid(errors) => Some(errors),
            _ => None,
        }
    }
}

impl From<FieldErrors> for ConfigError {
    fn from(errors: FieldErrors) -> Self {
        Self::Invalid(errors)
    }
}

impl From<FieldError> for ConfigError {
    fn from(err: FieldError) -> Self {
        Self::Invalid(err.into())
    }
}

impl ProvidersConfig {
    /// Loads and validates a YAML document `providers: [...]`.
    pub fn from_yaml_str(text: &str) -> Result<Self, ConfigError> {
        Self::from_str_as(text, ConfigFormat::Yaml)
    }

    /// Loads and validates a JSON document `{"providers": [...]}`.
    pub fn from_json_str(text: &str) -> Result<Self, ConfigError> {
        Self::from_str_as(text, ConfigFormat::Json)
    }

    /// Loads and validates a document in the given format.
    pub fn from_str_as(text: &str, format: ConfigFormat) -> Result<Self, ConfigError> {
        let raw = match format {
            ConfigFormat::Yaml => parse_yaml(text),
            ConfigFormat::Json => {
                let mut de = serde_json::Deserializer::from_str(text);
                tracked(&mut de).and_then(|doc| {
                    de.end().map_err(|e| parse_error(String::new(), e))?;
                    Ok(doc)
                })
            }
        }?;
        Ok(validate(raw)?)
    }

    /// Loads and validates an already parsed `{"providers": [...]}` value,
    /// e.g. the provider section cut out of a larger controller config.
    pub fn from_value(value: &Value) -> Result<Self, ConfigError> {
        Ok(validate(tracked(value)?)?)
    }

    /// Reads a file and loads it in the format its extension names.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let path = path.as_ref();
        let format = ConfigFormat::from_path(path).ok_or_else(|| ConfigError::UnknownFormat {
            path: path.to_owned(),
        })?;
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::from_str_as(&text, format)
    }

    /// The entry with this name.
    pub fn entry(&self, name: &str) -> Option<&ProviderEntry> {
        self.providers.iter().find(|e| e.name == *name)
    }
}

impl ProviderEntry {
    /// This entry's path in the document, e.g. `providers[1]`.
    pub fn path(&self) -> String {
        join_index("providers", self.index)
    }

    /// The path of a field of this entry, e.g. `providers[1].host`.
    ///
    /// `field` is a path relative to the entry, in the same syntax:
    /// `host`, `tls.ca` or `hosts[2]`.
    pub fn field_path(&self, field: &str) -> String {
        let base = self.path();
        if field.is_empty() {
            base
        } else if field.starts_with('[') {
            format!("{base}{field}")
        } else {
            format!("{base}.{field}")
        }
    }

    /// A [`FieldError`] about a field of this entry (`field` as in
    /// [`field_path`](Self::field_path)), for factories that check their
    /// settings beyond what deserialization does.
    pub fn field_error(&self, field: &str, problem: Problem) -> FieldError {
        FieldError::new(self.field_path(field), problem)
    }

    /// The image with this key.
    pub fn image(&self, key: &str) -> Option<&ImageSource> {
        self.images.get(key)
    }

    /// Deserializes the type-specific settings into `T`, strictly.
    ///
    /// Every key `T` does not read is an error ([`Problem::UnknownField`]),
    /// whether or not `T` says `#[serde(deny_unknown_fields)]`, and errors
    /// carry the entry's path, e.g. `providers[1].port`. The registry calls
    /// this for each factory's [`Settings`](crate::ProviderFactory::Settings).
    pub fn settings<T: DeserializeOwned>(&self) -> Result<T, FieldErrors> {
        let value = Value::Object(self.settings.clone());
        let base = self.path();
        let mut unknown = Vec::new();
        let mut track = serde_path_to_error::Track::new();
        let result = {
            let mut on_ignored = |p: serde_ignored::Path<'_>| unknown.push(ignored_path(&base, &p));
            let de = serde_ignored::Deserializer::new(&value, &mut on_ignored);
            T::deserialize(serde_path_to_error::Deserializer::new(de, &mut track))
        };
        let mut errors = FieldErrors::new();
        let out = match result {
            Ok(v) => Some(v),
            Err(e) => {
                errors.push(parse_error(tracked_path(&base, &track.path()), e));
                None
            }
        };
        for path in unknown {
            errors.push(FieldError::new(path, Problem::UnknownField));
        }
        match out {
            Some(v) if errors.is_empty() => Ok(v),
            _ => Err(errors),
        }
    }
}

fn parse_yaml(text: &str) -> Result<RawDocument, FieldErrors> {
    let mut path = None;
    let result = serde_saphyr::with_deserializer_from_str(text, |de| {
        let mut track = serde_path_to_error::Track::new();
        let r = RawDocument::deserialize(serde_path_to_error::Deserializer::new(de, &mut track));
        if r.is_err() {
            path = Some(track.path());
        }
        r
    });
    result.map_err(|e| {
        let at = path.map(|p| tracked_path("", &p)).unwrap_or_default();
        parse_error(at, e).into()
    })
}

fn tracked<'de, D>(de: D) -> Result<RawDocument, FieldErrors>
where
    D: serde::Deserializer<'de>,
    D::Error: std::error::Error + Send + Sync + 'static,
{
    serde_path_to_error::deserialize(de).map_err(|e| {
        let at = tracked_path("", e.path());
        parse_error(at, e.into_inner()).into()
    })
}

fn parse_error(path: String, source: impl std::error::Error + Send + Sync + 'static) -> FieldError {
    FieldError::new(
        path,
        Problem::Parse {
            source: Box::new(source),
        },
    )
}

/// Renders a `serde_path_to_error` path in this crate's path syntax.
fn tracked_path(base: &str, path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = base.to_owned();
    for seg in path {
        out = match seg {
            Segment::Seq { index } => join_index(&out, *index),
            Segment::Map { key } => join_key(&out, key),
            Segment::Enum { variant } => join_key(&out, variant),
            Segment::Unknown => join_key(&out, "?"),
        };
    }
    out
}

/// Renders a `serde_ignored` path in this crate's path syntax.
fn ignored_path(base: &str, path: &serde_ignored::Path<'_>) -> String {
    use serde_ignored::Path as P;
    match path {
        P::Root => base.to_owned(),
        P::Seq { parent, index } => join_index(&ignored_path(base, parent), *index),
        P::Map { parent, key } => join_key(&ignored_path(base, parent), key),
        P::Some { parent } | P::NewtypeStruct { parent } | P::NewtypeVariant { parent } => {
            ignored_path(base, parent)
        }
    }
}

fn identifier(errors: &mut FieldErrors, path: &str, value: &str) -> Option<Identifier> {
    match Identifier::new(value) {
        Ok(id) => Some(id),
        Err(source) => {
            errors.push(FieldError::new(
                path,
                Problem::NotIdentifier {
                    value: value.to_owned(),
                    source,
                },
            ));
            None
        }
    }
}

fn validate(raw: RawDocument) -> Result<ProvidersConfig, FieldErrors> {
    let mut errors = FieldErrors::new();
    for key in &raw.unknown {
        errors.push(FieldError::new(join_key("", key), Problem::UnknownField));
    }
    let Some(entries) = raw.providers else {
        errors.push(FieldError::new("providers", Problem::Missing));
        return Err(errors);
    };
    if entries.is_empty() {
        errors.push(FieldError::new("providers", Problem::Empty));
    }

    let mut first_use: BTreeMap<String, String> = BTreeMap::new();
    let mut providers = Vec::with_capacity(entries.len());
    for (index, entry) in entries.into_iter().enumerate() {
        let path = join_index("providers", index);
        let name_path = join_key(&path, "name");
        // Uniqueness is checked on the raw text so that two equal bad names
        // are reported as both invalid and duplicate.
        if let Some(name) = &entry.name {
            if let Some(first) = first_use.get(name) {
                errors.push(FieldError::new(
                    &name_path,
                    Problem::Duplicate {
                        value: name.clone(),
                        first: first.clone(),
                    },
                ));
            } else {
                first_use.insert(name.clone(), name_path.clone());
            }
        }
        if let Some(e) = validate_entry(&mut errors, &path, index, entry) {
            providers.push(e);
        }
    }
    errors.into_result(ProvidersConfig { providers })
}

fn validate_entry(
    errors: &mut FieldErrors,
    path: &str,
    index: usize,
    entry: RawEntry,
) -> Option<ProviderEntry> {
    let name = required(errors, path, "name", entry.name.as_deref());
    let provider_type = required(errors, path, "type", entry.provider_type.as_deref());
    let allow_unverified_images = entry.allow_unverified_images.unwrap_or(false);

    let images_path = join_key(path, "images");
    let mut images = BTreeMap::new();
    let mut images_ok = true;
    match entry.images {
        None => {
            errors.push(FieldError::new(&images_path, Problem::Missing));
            images_ok = false;
        }
        Some(list) if list.is_empty() => {
            errors.push(FieldError::new(&images_path, Problem::Empty));
            images_ok = false;
        }
        Some(list) => {
            for (key, raw) in list {
                let image_path = join_key(&images_path, &key);
                let key = identifier(errors, &image_path, &key);
                let image = validate_image(errors, &image_path, raw, allow_unverified_images);
                match (key, image) {
                    (Some(k), Some(i)) => {
                        images.insert(k, i);
                    }
                    _ => images_ok = false,
                }
            }
        }
    }

    Some(ProviderEntry {
        name: name?,
        provider_type: provider_type?,
        images: images_ok.then_some(images)?,
        allow_unverified_images,
        settings: entry.settings,
        index,
    })
}

fn required(
    errors: &mut FieldErrors,
    path: &str,
    field: &str,
    value: Option<&str>,
) -> Option<Identifier> {
    let at = join_key(path, field);
    match value {
        None => {
            errors.push(FieldError::new(at, Problem::Missing));
            None
        }
        Some("") => {
            errors.push(FieldError::new(at, Problem::Empty));
            None
        }
        Some(v) => identifier(errors, &at, v),
    }
}

fn validate_image(
    errors: &mut FieldErrors,
    path: &str,
    raw: RawImage,
    allow_unverified: bool,
) -> Option<ImageSource> {
    let before = errors.len();
    for key in &raw.unknown {
        errors.push(FieldError::new(join_key(path, key), Problem::UnknownField));
    }

    let url_path = join_key(path, "url");
    let url = match raw.url {
        None => {
            errors.push(FieldError::new(url_path, Problem::Missing));
            None
        }
        Some(text) => match Url::parse(&text) {
            Err(source) => {
                errors.push(FieldError::new(
                    url_path,
                    Problem::BadUrl {
                        value: crate::redact_url(&text),
                        source,
                    },
                ));
                None
            }
            Ok(url) if !matches!(url.scheme(), "http" | "https") => {
                errors.push(FieldError::new(
                    url_path,
                    Problem::UnsupportedScheme {
                        scheme: url.scheme().to_owned(),
                    },
                ));
                None
            }
            Ok(url) => Some(url),
        },
    };

    let sha_path = join_key(path, "sha256");
    let sha256 = match raw.sha256 {
        None if allow_unverified => None,
        None => {
            errors.push(FieldError::new(sha_path, Problem::MissingSha256));
            None
        }
        Some(text) => {
            let digest = Sha256Digest::from_hex(&text);
            if digest.is_none() {
                errors.push(FieldError::new(
                    sha_path,
                    Problem::BadSha256 { value: text },
                ));
            }
            digest
        }
    };

    let format_path = join_key(path, "format");
    let format = match raw.format {
        None => {
            errors.push(FieldError::new(format_path, Problem::Missing));
            None
        }
        Some(text) => {
            let format = ImageFormat::from_name(&text);
            if format.is_none() {
                errors.push(FieldError::new(
                    format_path,
                    Problem::UnsupportedFormat { value: text },
                ));
            }
            format
        }
    };

    if errors.len() > before {
        return None;
    }
    Some(ImageSource {
        url: url?,
        sha256,
        format: format?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_round_trip() {
        let hex = "00ff".repeat(16);
        let d = Sha256Digest::from_hex(&hex).unwrap();
        assert_eq!(d.to_string(), hex);
        assert_eq!(
            Sha256Digest::from_hex(&hex.to_uppercase()).unwrap(),
            d,
            "uppercase accepted"
        );
        assert!(Sha256Digest::from_hex(&hex[1..]).is_none());
        assert!(Sha256Digest::from_hex(&format!("{}g", &hex[1..])).is_none());
        // Multi-byte input of the right byte length must not panic or pass.
        assert!(Sha256Digest::from_hex(&"é".repeat(32)).is_none());
    }

    #[test]
    fn format_from_path() {
        assert_eq!(
            ConfigFormat::from_path(Path::new("a/p.yml")),
            Some(ConfigFormat::Yaml)
        );
        assert_eq!(
            ConfigFormat::from_path(Path::new("p.json")),
            Some(ConfigFormat::Json)
        );
        assert_eq!(ConfigFormat::from_path(Path::new("p.toml")), None);
        assert_eq!(ConfigFormat::from_path(Path::new("p")), None);
    }
}

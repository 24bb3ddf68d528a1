//! Per-test TLS certificates in libvirt's file layout, generated with rcgen.
//!
//! ```text
//! <dir>/
//!   server/  cacert.pem servercert.pem serverkey.pem   ← libvirtd's key_file/cert_file/ca_file
//!   client/  cacert.pem clientcert.pem clientkey.pem   ← a client's ?pkipath=
//! ```
//!
//! One CA signs the server and the client certificate. [`Pki::client_dir`] writes other
//! client layouts for the error cases: a foreign CA, a certificate the daemon's CA did not
//! sign, no certificate at all. [`ServerCert`] makes the server certificate name other hosts
//! or be expired. [`Pki::write_crl`] writes the CA's revocation list (`cacrl.pem`), with or
//! without the server certificate on it.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, CertificateRevocationListParams, DnType,
    ExtendedKeyUsagePurpose, IsCa, Issuer, KeyIdMethod, KeyPair, KeyUsagePurpose, RevocationReason,
    RevokedCertParams, SerialNumber, date_time_ymd,
};

/// The server certificate's serial number (each [`Pki`] has its own CA, so serials only need
/// to differ within one).
const SERVER_SERIAL: u64 = 0x5e12_0001;
/// Client certificates' serial number.
const CLIENT_SERIAL: u64 = 0x5e12_0002;

/// What the server certificate looks like.
#[derive(Debug, Clone)]
pub struct ServerCert {
    /// Subject alternative names (IP addresses or DNS names).
    pub names: Vec<String>,
    /// Valid only in 2020 (the daemon then needs `tls_no_sanity_certificate = 1` to start).
    pub expired: bool,
}

impl Default for ServerCert {
    /// Valid for `127.0.0.1` and `localhost`.
    fn default() -> Self {
        Self {
            names: vec!["127.0.0.1".into(), "localhost".into()],
            expired: false,
        }
    }
}

/// Which client files to write (see [`Pki::client_dir`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientPki {
    /// Our CA and a client certificate it signed.
    Good,
    /// A CA that did not sign the server certificate (the client must refuse the server).
    ForeignCa,
    /// Our CA, and a client certificate signed by another CA (the daemon must refuse us).
    ForeignClientCert,
    /// Our CA and no client certificate (the daemon must refuse us).
    NoClientCert,
}

/// A CA and its certificates, written under one directory.
#[derive(Debug)]
pub struct Pki {
    dir: PathBuf,
    ca_pem: String,
    ca: Issuer<'static, KeyPair>,
}

#[allow(clippy::needless_pass_by_value)] // used as `map_err(err)`
fn err(e: rcgen::Error) -> io::Error {
    io::Error::other(e.to_string())
}

fn ca(name: &str) -> Result<(String, Issuer<'static, KeyPair>), io::Error> {
    let key = KeyPair::generate().map_err(err)?;
    let mut p = CertificateParams::new(Vec::<String>::new()).map_err(err)?;
    p.distinguished_name.push(DnType::CommonName, name);
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    p.not_before = date_time_ymd(2020, 1, 1);
    p.not_after = date_time_ymd(2099, 12, 31);
    let pem = p.self_signed(&key).map_err(err)?.pem();
    Ok((pem, Issuer::new(p, key)))
}

/// A leaf certificate and its key, PEM.
fn leaf(
    issuer: &Issuer<'_, KeyPair>,
    cn: &str,
    names: Vec<String>,
    usage: ExtendedKeyUsagePurpose,
    expired: bool,
) -> Result<(String, String), io::Error> {
    let key = KeyPair::generate().map_err(err)?;
    let mut p = CertificateParams::new(names).map_err(err)?;
    p.serial_number = Some(SerialNumber::from(
        if usage == ExtendedKeyUsagePurpose::ServerAuth {
            SERVER_SERIAL
        } else {
            CLIENT_SERIAL
        },
    ));
    p.distinguished_name.push(DnType::CommonName, cn);
    p.distinguished_name
        .push(DnType::OrganizationName, "testbed");
    p.is_ca = IsCa::ExplicitNoCa;
    p.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    p.extended_key_usages = vec![usage];
    if expired {
        p.not_before = date_time_ymd(2020, 1, 1);
        p.not_after = date_time_ymd(2021, 1, 1);
    } else {
        p.not_before = date_time_ymd(2020, 1, 1);
        p.not_after = date_time_ymd(2099, 12, 31);
    }
    let cert = p.signed_by(&key, issuer).map_err(err)?;
    Ok((cert.pem(), key.serialize_pem()))
}

fn write(dir: &Path, files: &[(&str, &str)]) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    for (name, text) in files {
        fs::write(dir.join(name), text)?;
    }
    Ok(())
}

impl Pki {
    /// A new CA under `dir`, with `dir/server` (for `server`) and a [`ClientPki::Good`]
    /// `dir/client`.
    pub fn generate(dir: &Path, server: &ServerCert) -> io::Result<Self> {
        let (ca_pem, ca) = ca("testbed CA")?;
        let pki = Self {
            dir: dir.to_path_buf(),
            ca_pem,
            ca,
        };
        let (cert, key) = leaf(
            &pki.ca,
            "testbed libvirtd",
            server.names.clone(),
            ExtendedKeyUsagePurpose::ServerAuth,
            server.expired,
        )?;
        write(
            &pki.server_dir(),
            &[
                ("cacert.pem", &pki.ca_pem),
                ("servercert.pem", &cert),
                ("serverkey.pem", &key),
            ],
        )?;
        pki.client_dir(&dir.join("client"), ClientPki::Good)?;
        Ok(pki)
    }

    /// The daemon's files (`cacert.pem`, `servercert.pem`, `serverkey.pem`).
    pub fn server_dir(&self) -> PathBuf {
        self.dir.join("server")
    }

    /// The good client dir (`?pkipath=` for a client the daemon accepts).
    pub fn good_client_dir(&self) -> PathBuf {
        self.dir.join("client")
    }

    /// Writes `dir/cacrl.pem`: this CA's certificate revocation list (valid from 2020 to
    /// 2099), listing the server certificate when `revoke_server`, else nothing. Returns the
    /// file.
    pub fn write_crl(&self, dir: &Path, revoke_server: bool) -> io::Result<PathBuf> {
        let revoked_certs = if revoke_server {
            vec![RevokedCertParams {
                serial_number: SerialNumber::from(SERVER_SERIAL),
                revocation_time: date_time_ymd(2021, 1, 1),
                reason_code: Some(RevocationReason::KeyCompromise),
                invalidity_date: None,
            }]
        } else {
            Vec::new()
        };
        let crl = CertificateRevocationListParams {
            this_update: date_time_ymd(2021, 1, 1),
            next_update: date_time_ymd(2099, 12, 31),
            crl_number: SerialNumber::from(1u64),
            issuing_distribution_point: None,
            revoked_certs,
            key_identifier_method: KeyIdMethod::Sha256,
        }
        .signed_by(&self.ca)
        .map_err(err)?;
        let pem = crl.pem().map_err(err)?;
        write(dir, &[("cacrl.pem", &pem)])?;
        Ok(dir.join("cacrl.pem"))
    }

    /// Write a client `?pkipath=` dir of the given kind at `dir`.
    pub fn client_dir(&self, dir: &Path, kind: ClientPki) -> io::Result<PathBuf> {
        let client = |issuer: &Issuer<'_, KeyPair>| {
            leaf(
                issuer,
                "testbed client",
                Vec::new(),
                ExtendedKeyUsagePurpose::ClientAuth,
                false,
            )
        };
        // (CA file the client trusts, the CA that signs the client's certificate); `None`:
        // no client certificate at all.
        let other = ca("some other CA")?;
        let (trusted, signer) = match kind {
            ClientPki::Good => (&self.ca_pem, Some(&self.ca)),
            ClientPki::ForeignCa => (&other.0, Some(&other.1)),
            ClientPki::ForeignClientCert => (&self.ca_pem, Some(&other.1)),
            ClientPki::NoClientCert => (&self.ca_pem, None),
        };
        match signer {
            Some(signer) => {
                let (cert, key) = client(signer)?;
                write(
                    dir,
                    &[
                        ("cacert.pem", trusted),
                        ("clientcert.pem", &cert),
                        ("clientkey.pem", &key),
                    ],
                )?;
            }
            None => write(dir, &[("cacert.pem", trusted)])?,
        }
        Ok(dir.to_path_buf())
    }
}

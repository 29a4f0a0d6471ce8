//! `sslOptions` -> an OpenSSL context for the `scylla` session.
//!
//! The JS side (lib/tls.js) checks the option names and turns strings into buffers; this
//! module builds the context. Choices, and why:
//! - Verification is on unless `rejectUnauthorized: false`: the driver connects by IP and
//!   `scylla` asks OpenSSL to match that IP against the certificate (Node's `tls` checks the
//!   same when it connects to an IP), so a certificate for another node is refused.
//! - `ca` replaces the system roots, as it does in Node; without `ca` the system roots
//!   (OpenSSL's default verify paths) are trusted.
//! - There is no plaintext fallback anywhere: a context set here is used for every
//!   connection, and a failed handshake fails the connection.

use crate::errors::{ErrorInfo, ErrorKind};
use napi::bindgen_prelude::Buffer;
use napi_derive::napi;
use openssl::pkcs12::Pkcs12;
use openssl::pkey::{PKey, Private};
use openssl::ssl::{SslConnector, SslConnectorBuilder, SslMethod, SslVerifyMode, SslVersion};
use openssl::x509::store::X509StoreBuilder;
use openssl::x509::X509;
use scylla::client::session::OpenSsl010Config;

/// The parts of Node's `tls.ConnectionOptions` that weir-cql maps (see lib/tls.js).
#[napi(object)]
pub struct TlsOptions {
    /// PEM CA certificates (each buffer may hold several); replaces the system roots.
    pub ca: Option<Vec<Buffer>>,
    /// PEM client certificate chain, leaf first.
    pub cert: Option<Vec<Buffer>>,
    /// PEM private keys (the first is used).
    pub key: Option<Vec<Buffer>>,
    /// Decrypts `key` or `pfx`.
    pub passphrase: Option<String>,
    /// PKCS#12 bundle: key, certificate and CA chain.
    pub pfx: Option<Buffer>,
    /// false: no certificate or identity check at all (Node's `rejectUnauthorized: false`).
    pub reject_unauthorized: bool,
    /// "TLSv1.2" / "TLSv1.3" (Node's names).
    pub min_version: Option<String>,
    pub max_version: Option<String>,
    /// OpenSSL cipher list (TLS 1.2 and below), as Node's `ciphers`.
    pub ciphers: Option<String>,
}

fn tls_error(what: &str, e: impl std::fmt::Display) -> ErrorInfo {
    ErrorInfo::new(ErrorKind::Argument, format!("sslOptions.{what}: {e}"))
}

fn version(name: &str, field: &str) -> Result<SslVersion, ErrorInfo> {
    match name {
        "TLSv1" => Ok(SslVersion::TLS1),
        "TLSv1.1" => Ok(SslVersion::TLS1_1),
        "TLSv1.2" => Ok(SslVersion::TLS1_2),
        "TLSv1.3" => Ok(SslVersion::TLS1_3),
        other => Err(tls_error(
            field,
            format!("unknown protocol version '{other}'; use 'TLSv1.2' or 'TLSv1.3'"),
        )),
    }
}

fn private_key(pem: &[u8], passphrase: Option<&str>) -> Result<PKey<Private>, ErrorInfo> {
    match passphrase {
        Some(p) => PKey::private_key_from_pem_passphrase(pem, p.as_bytes()),
        None => PKey::private_key_from_pem(pem),
    }
    .map_err(|e| tls_error("key", format!("cannot read the PEM private key ({e}); a key with a password needs sslOptions.passphrase")))
}

fn set_trust(b: &mut SslConnectorBuilder, ca: &[Buffer]) -> Result<(), ErrorInfo> {
    let mut store = X509StoreBuilder::new().map_err(|e| tls_error("ca", e))?;
    let mut count = 0usize;
    for pem in ca {
        let certs = X509::stack_from_pem(pem)
            .map_err(|e| tls_error("ca", format!("not a PEM certificate ({e})")))?;
        for cert in certs {
            store.add_cert(cert).map_err(|e| tls_error("ca", e))?;
            count += 1;
        }
    }
    if count == 0 {
        return Err(tls_error(
            "ca",
            "holds no PEM certificate (expected -----BEGIN CERTIFICATE-----)",
        ));
    }
    b.set_cert_store(store.build());
    Ok(())
}

fn set_identity(b: &mut SslConnectorBuilder, o: &TlsOptions) -> Result<(), ErrorInfo> {
    let pass = o.passphrase.as_deref();
    if let Some(pfx) = &o.pfx {
        let parsed = Pkcs12::from_der(pfx)
            .and_then(|p| p.parse2(pass.unwrap_or("")))
            .map_err(|e| {
                tls_error(
                    "pfx",
                    format!("cannot read the PKCS#12 bundle ({e}); check sslOptions.passphrase"),
                )
            })?;
        if let Some(cert) = parsed.cert {
            b.set_certificate(&cert).map_err(|e| tls_error("pfx", e))?;
        }
        if let Some(key) = parsed.pkey {
            b.set_private_key(&key).map_err(|e| tls_error("pfx", e))?;
        }
        for extra in parsed.ca.into_iter().flatten() {
            b.add_extra_chain_cert(extra)
                .map_err(|e| tls_error("pfx", e))?;
        }
    }
    if let Some(chain) = &o.cert {
        let mut certs = Vec::new();
        for pem in chain {
            certs.extend(
                X509::stack_from_pem(pem)
                    .map_err(|e| tls_error("cert", format!("not a PEM certificate ({e})")))?,
            );
        }
        let mut it = certs.into_iter();
        let leaf = it
            .next()
            .ok_or_else(|| tls_error("cert", "holds no PEM certificate"))?;
        b.set_certificate(&leaf).map_err(|e| tls_error("cert", e))?;
        for extra in it {
            b.add_extra_chain_cert(extra)
                .map_err(|e| tls_error("cert", e))?;
        }
    }
    if let Some(keys) = &o.key {
        let first = keys.first().ok_or_else(|| tls_error("key", "is empty"))?;
        let key = private_key(first, pass)?;
        b.set_private_key(&key).map_err(|e| tls_error("key", e))?;
    }
    if o.cert.is_some() || o.key.is_some() || o.pfx.is_some() {
        b.check_private_key().map_err(|e| {
            tls_error(
                "key",
                format!("does not match the client certificate ({e})"),
            )
        })?;
    }
    Ok(())
}

/// Builds the session's TLS context from `sslOptions`.
pub fn context(o: &TlsOptions) -> Result<OpenSsl010Config, ErrorInfo> {
    let mut b =
        SslConnector::builder(SslMethod::tls_client()).map_err(|e| tls_error("(context)", e))?;
    if let Some(ca) = &o.ca {
        set_trust(&mut b, ca)?;
    }
    set_identity(&mut b, o)?;
    if let Some(v) = &o.min_version {
        b.set_min_proto_version(Some(version(v, "minVersion")?))
            .map_err(|e| tls_error("minVersion", e))?;
    }
    if let Some(v) = &o.max_version {
        b.set_max_proto_version(Some(version(v, "maxVersion")?))
            .map_err(|e| tls_error("maxVersion", e))?;
    }
    if let Some(c) = &o.ciphers {
        b.set_cipher_list(c).map_err(|e| tls_error("ciphers", e))?;
    }
    if !o.reject_unauthorized {
        b.set_verify(SslVerifyMode::NONE);
    }
    Ok(OpenSsl010Config::new(b))
}

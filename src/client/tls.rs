//! TLS as companies deploy it: self-hosted servers behind an internal CA, TLS-inspecting proxies
//! and mutual TLS. Every client trusts the bundled Mozilla roots and the system's certificate
//! store (where a corporate CA is usually installed); `target.tls` adds a CA file, a client
//! certificate and key, or, as a last resort, turns verification off (`insecure: true`, which
//! warns on every run). The files are checked when the scenario loads; this module only turns
//! them into the HTTP client's settings.

use crate::scenario::Tls;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("target.tls.{field}: cannot read {}: {error}", .path.display())]
    Read {
        field: &'static str,
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("target.tls.ca_file: {} holds no usable PEM certificate ({reason}); expected -----BEGIN CERTIFICATE----- blocks", .path.display())]
    Ca { path: PathBuf, reason: String },
    #[error("target.tls.client_cert / client_key: {} and {} do not make a client identity ({reason}); expected a PEM certificate chain and its PEM private key", .cert.display(), .key.display())]
    Identity {
        cert: PathBuf,
        key: PathBuf,
        reason: String,
    },
}

/// The warning printed on every run with `insecure: true`.
pub fn insecure_warning(tls: &Tls) -> Option<String> {
    tls.insecure.then(|| {
        "target.tls.insecure is true: server certificates are NOT verified, so anyone on the path can read the prompts and the API key; use target.tls.ca_file instead".to_string()
    })
}

fn read(field: &'static str, path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|error| TlsError::Read {
        field,
        path: path.to_path_buf(),
        error,
    })
}

/// `builder` with the scenario's TLS settings applied.
pub fn configure(
    mut builder: reqwest::ClientBuilder,
    tls: &Tls,
) -> Result<reqwest::ClientBuilder, TlsError> {
    if let Some(path) = &tls.ca_file {
        let pem = read("ca_file", path)?;
        let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| TlsError::Ca {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        if certs.is_empty() {
            return Err(TlsError::Ca {
                path: path.clone(),
                reason: "no certificate in it".into(),
            });
        }
        for c in certs {
            builder = builder.add_root_certificate(c);
        }
    }
    if let (Some(cert), Some(key)) = (&tls.client_cert, &tls.client_key) {
        let mut pem = read("client_cert", cert)?;
        pem.push(b'\n');
        pem.extend(read("client_key", key)?);
        // reqwest's message names what is missing; it never contains the key material.
        let identity = reqwest::Identity::from_pem(&pem).map_err(|e| TlsError::Identity {
            cert: cert.clone(),
            key: key.clone(),
            reason: e.to_string(),
        })?;
        builder = builder.identity(identity);
    }
    if tls.insecure {
        builder = builder.danger_accept_invalid_certs(true);
    }
    Ok(builder)
}

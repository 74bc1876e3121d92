//! TLS as companies deploy it: self-hosted servers behind an internal CA, TLS-inspecting proxies
//! and mutual TLS. Every client trusts the bundled Mozilla roots and the system's certificate
//! store (where a corporate CA is usually installed); `target.tls` adds a CA file, a client
//! certificate and key, or, as a last resort, turns verification off (`insecure: true`, which
//! warns on every run). The files are checked when the scenario loads; this module only turns
//! them into the HTTP client's settings.

use crate::scenario::Tls;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    #[error("target.tls.client_cert: the certificate in {} is X.509 version 1 (what `openssl x509 -req` makes without extensions); TLS needs a version 3 certificate: sign it again with extensions, e.g. `openssl x509 -req ... -extfile <(printf 'basicConstraints=CA:FALSE\\nextendedKeyUsage=clientAuth')`", .cert.display())]
    CertVersion { cert: PathBuf },
}

/// Whether the first PEM certificate in `pem` is X.509 v1: its `tbsCertificate` starts with
/// the serial number (INTEGER, tag 0x02) instead of the `[0]` version field (tag 0xA0).
fn first_cert_is_v1(pem: &[u8]) -> bool {
    let text = String::from_utf8_lossy(pem);
    let Some(body) = text
        .split("-----BEGIN CERTIFICATE-----")
        .nth(1)
        .and_then(|rest| rest.split("-----END CERTIFICATE-----").next())
    else {
        return false;
    };
    let Some(der) = base64_decode(body) else {
        return false;
    };
    // SEQUENCE (certificate) { SEQUENCE (tbsCertificate) { first element ...
    let skip_header = |d: &[u8]| -> Option<usize> {
        if d.first() != Some(&0x30) {
            return None;
        }
        let len = *d.get(1)?;
        Some(if len & 0x80 == 0 {
            2
        } else {
            2 + usize::from(len & 0x7f)
        })
    };
    let Some(outer) = skip_header(&der) else {
        return false;
    };
    let Some(inner) = der.get(outer..).and_then(skip_header) else {
        return false;
    };
    der.get(outer + inner) == Some(&0x02)
}

fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let (mut out, mut acc, mut bits) = (Vec::new(), 0u32, 0u32);
    for c in text
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b'=')
    {
        acc = (acc << 6) | u32::from(value(c)?);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
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

/// The system's root certificates, read and decoded once and added to every client built with
/// them. Left to reqwest, each client reads the system store and decodes its PEM again: about
/// 19 M instructions (~10 ms) per client, and a run builds two (the pooled one and the pool-less
/// one for resends, `client::pool`), three when a server asks for shorter keep-alive. Like
/// reqwest, certificates the TLS library cannot use (old, malformed) are skipped.
#[derive(Clone, Debug, Default)]
pub struct SystemRoots(Arc<Vec<reqwest::Certificate>>);

impl SystemRoots {
    /// Reads the system's certificate store (`SSL_CERT_FILE`, `SSL_CERT_DIR` or the platform's
    /// default places, as `rustls-native-certs` finds them).
    pub fn load() -> SystemRoots {
        let found = rustls_native_certs::load_native_certs();
        let mut check = rustls::RootCertStore::empty();
        let usable = found
            .certs
            .into_iter()
            .filter(|der| check.add(der.clone()).is_ok())
            .filter_map(|der| reqwest::Certificate::from_der(&der).ok())
            .collect();
        SystemRoots(Arc::new(usable))
    }

    /// No certificates from the system: for clients that never make a TLS connection (see
    /// [`system_roots_needed`]).
    pub fn none() -> SystemRoots {
        SystemRoots::default()
    }
}

/// Whether the clients of a run against `base_url` can make a TLS connection, so need the
/// system's store: the target is https (or not plainly http), or `proxy` (the URL of the proxy
/// its requests go through, credentials masked or not) is an https proxy. The run's clients
/// follow no redirects, so a plain-http target behind a plain proxy never does TLS, and the run
/// skips reading and decoding the store (about 19 M instructions, 5-20% of a short run against
/// a local server; benches/RESULTS.md, issue 24).
pub fn system_roots_needed(base_url: &str, proxy: Option<&str>) -> bool {
    let scheme_is = |url: &str, scheme: &str| {
        url.trim_start()
            .get(..scheme.len())
            .is_some_and(|s| s.eq_ignore_ascii_case(scheme))
    };
    !scheme_is(base_url, "http://") || proxy.is_some_and(|p| scheme_is(p, "https://"))
}

/// `builder` trusting the bundled Mozilla roots and `roots`, with the scenario's TLS settings
/// applied.
pub fn configure(
    builder: reqwest::ClientBuilder,
    tls: &Tls,
    roots: &SystemRoots,
) -> Result<reqwest::ClientBuilder, TlsError> {
    let mut builder = builder.tls_built_in_native_certs(false);
    for cert in roots.0.iter() {
        builder = builder.add_root_certificate(cert.clone());
    }
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
        if first_cert_is_v1(&pem) {
            return Err(TlsError::CertVersion { cert: cert.clone() });
        }
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

#[cfg(test)]
mod tests {
    use super::{first_cert_is_v1, system_roots_needed};

    #[test]
    fn the_system_store_is_read_only_when_a_connection_can_be_tls() {
        // Plain http, directly or through a plain proxy: no TLS anywhere.
        assert!(!system_roots_needed("http://127.0.0.1:8000/v1", None));
        assert!(!system_roots_needed("HTTP://Host/v1", None));
        assert!(!system_roots_needed(
            "http://vllm.internal/v1",
            Some("http://***@proxy:3128")
        ));
        assert!(!system_roots_needed("http://h/v1", Some("proxy.corp:3128")));
        // An https target, in any case, or an https proxy.
        assert!(system_roots_needed("https://api.openai.com/v1", None));
        assert!(system_roots_needed("HTTPS://api.openai.com/v1", None));
        assert!(system_roots_needed(
            "http://vllm.internal/v1",
            Some("https://***@proxy.corp:443")
        ));
        assert!(system_roots_needed("http://h/v1", Some("HTTPS://p")));
        // Anything that is not plainly http is treated as possibly TLS.
        assert!(system_roots_needed("", None));
        assert!(system_roots_needed("http:/missing-slash", None));
        assert!(system_roots_needed("ws://h", None));
        assert!(system_roots_needed("htt", None));
    }

    fn pem(b64: &str) -> Vec<u8> {
        format!("-----BEGIN CERTIFICATE-----\n{b64}\n-----END CERTIFICATE-----\n").into_bytes()
    }

    #[test]
    fn version_1_client_certificates_are_told_apart() {
        // SEQUENCE { SEQUENCE { INTEGER ... } }: no version field, so v1.
        assert!(first_cert_is_v1(&pem("MAMwAQI=")));
        // SEQUENCE { SEQUENCE { [0] ... } }: a version field (v2/v3).
        assert!(!first_cert_is_v1(&pem("MAMwAaA=")));
        let v3 = rcgen::generate_simple_self_signed(vec!["client".into()]).unwrap();
        assert!(!first_cert_is_v1(v3.cert.pem().as_bytes()));
        assert!(!first_cert_is_v1(b"not a certificate"));
    }
}

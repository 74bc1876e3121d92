//! `target.tls`: a private CA, a client certificate for mutual TLS, or (warned about on every
//! run) no verification at all. Paths are relative to the scenario file, like prompt files, and
//! are read here so that `validate` catches a missing or non-PEM file before any traffic.

use super::errors::Ctx;
use super::raw::RawTls;
use super::{ScenarioError, Tls};
use std::path::{Path, PathBuf};

const CERT: &str = "-----BEGIN CERTIFICATE-----";

/// A readable PEM file at `rel` (relative to the scenario) holding `marker`.
fn pem_file(
    cx: &Ctx,
    key: &str,
    rel: Option<String>,
    marker: &str,
    what: &str,
) -> Result<Option<PathBuf>, ScenarioError> {
    let Some(rel) = rel.map(|r| r.trim().to_string()).filter(|r| !r.is_empty()) else {
        return Ok(None);
    };
    let path = cx.file.parent().unwrap_or(Path::new("")).join(&rel);
    let field = format!("target.tls.{key}");
    match std::fs::read(&path) {
        Err(e) => Err(cx.err(
            &field,
            format!(
                "cannot read {} ({e}); the path is relative to the scenario file",
                path.display()
            ),
        )),
        Ok(bytes) if !String::from_utf8_lossy(&bytes).contains(marker) => Err(cx.err(
            &field,
            format!(
                "{} is not a PEM {what} (no `{marker}` line); convert it, e.g. openssl x509 -inform der -in cert.der -out cert.pem",
                path.display()
            ),
        )),
        Ok(_) => Ok(Some(path)),
    }
}

pub(super) fn build_tls(cx: &Ctx, raw: Option<RawTls>) -> Result<Tls, ScenarioError> {
    let Some(r) = raw else {
        return Ok(Tls::default());
    };
    let ca_file = pem_file(cx, "ca_file", r.ca_file, CERT, "certificate")?;
    let client_cert = pem_file(cx, "client_cert", r.client_cert, CERT, "certificate")?;
    let client_key = pem_file(
        cx,
        "client_key",
        r.client_key,
        "PRIVATE KEY-----",
        "private key",
    )?;
    match (&client_cert, &client_key) {
        (Some(_), None) => {
            return Err(cx.err(
                "target.tls.client_cert",
                "mutual TLS needs the certificate's private key too: add client_key: path/to/client.key".into(),
            ))
        }
        (None, Some(_)) => {
            return Err(cx.err(
                "target.tls.client_key",
                "mutual TLS needs the client certificate too: add client_cert: path/to/client.pem".into(),
            ))
        }
        _ => {}
    }
    Ok(Tls {
        ca_file,
        client_cert,
        client_key,
        insecure: r.insecure.unwrap_or(false),
    })
}

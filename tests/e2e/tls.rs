//! TLS against a real handshake: a CA generated for the test (rcgen), a server certificate it
//! signs for 127.0.0.1, and a small HTTPS server (rustls) that streams a chat completion. Checks
//! that a private CA is refused until `target.tls.ca_file` names it, that `insecure: true` works
//! and warns on every run, and mutual TLS with `client_cert`/`client_key`.

use crate::support::Project;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

/// A test CA with a server certificate for 127.0.0.1 and a client certificate, as PEM files in
/// the project, and the server's rustls settings.
struct Pki {
    server_chain: Vec<CertificateDer<'static>>,
    server_key: Vec<u8>,
    ca_der: CertificateDer<'static>,
}

impl Pki {
    fn new(p: &Project) -> Pki {
        let ca_key = KeyPair::generate().unwrap();
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        ca.distinguished_name
            .push(DnType::CommonName, "ladder test CA");
        let ca = ca.self_signed(&ca_key).unwrap();
        let server_key = KeyPair::generate().unwrap();
        let mut server = CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
        server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let server = server.signed_by(&server_key, &ca, &ca_key).unwrap();
        let client_key = KeyPair::generate().unwrap();
        let mut client = CertificateParams::new(Vec::<String>::new()).unwrap();
        client
            .distinguished_name
            .push(DnType::CommonName, "ladder test client");
        client.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let client = client.signed_by(&client_key, &ca, &ca_key).unwrap();
        let dir = p.path().join("scenarios/certs");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
        std::fs::write(dir.join("client.pem"), client.pem()).unwrap();
        std::fs::write(dir.join("client.key"), client_key.serialize_pem()).unwrap();
        Pki {
            server_chain: vec![server.der().clone(), ca.der().clone()],
            server_key: server_key.serialize_der(),
            ca_der: ca.der().clone(),
        }
    }

    /// An HTTPS server on 127.0.0.1; with `mutual`, it requires a client certificate of the CA.
    fn serve(&self, mutual: bool) -> u16 {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .unwrap();
        let builder = if mutual {
            let mut roots = rustls::RootCertStore::empty();
            roots.add(self.ca_der.clone()).unwrap();
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            )
            .build()
            .unwrap();
            builder.with_client_cert_verifier(verifier)
        } else {
            builder.with_no_client_auth()
        };
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.server_key.clone()));
        let config = Arc::new(
            builder
                .with_single_cert(self.server_chain.clone(), key)
                .unwrap(),
        );
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for tcp in listener.incoming().flatten() {
                let config = config.clone();
                std::thread::spawn(move || answer(tcp, config));
            }
        });
        port
    }
}

/// Reads one request over TLS and streams a two-token chat completion with usage.
fn answer(tcp: TcpStream, config: Arc<rustls::ServerConfig>) {
    tcp.set_read_timeout(Some(Duration::from_secs(5))).ok();
    let Ok(conn) = rustls::ServerConnection::new(config) else {
        return;
    };
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match tls.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let len: usize = head
        .lines()
        .find_map(|l| {
            l.strip_prefix("content-length:")
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(0);
    while buf.len() < head_end + len {
        match tls.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let body = ["Hi", " there"]
        .iter()
        .map(|t| format!("data: {{\"choices\":[{{\"delta\":{{\"content\":\"{t}\"}}}}]}}\n\n"))
        .collect::<String>()
        + "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n";
    let _ = write!(
        tls,
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    tls.conn.send_close_notify();
    let _ = tls.flush();
}

fn scenario(p: &Project, port: u16, tls: &str) -> String {
    let yaml = format!(
        "name: tls\ntarget:\n  base_url: https://127.0.0.1:{port}/v1\n  models: [m1]\n{tls}request:\n  prompt_file: prompts/p.txt\n  max_tokens: 2\nload:\n  ladder: [1]\n  requests_per_step: 3\n"
    );
    p.scenario("tls", &yaml).to_str().unwrap().to_string()
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn ladder(p: &Project, args: &[&str]) -> Out {
    let o = p
        .ladder()
        .args(args)
        .env_remove("SSL_CERT_FILE")
        .env_remove("SSL_CERT_DIR")
        .output()
        .unwrap();
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).to_string(),
        stderr: String::from_utf8_lossy(&o.stderr).to_string(),
    }
}

fn all_ok(p: &Project) -> usize {
    let dirs = p.run_dirs("tls");
    let csv = std::fs::read_to_string(dirs[dirs.len() - 1].join("requests.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert!(rows.iter().all(|r| r.contains(",ok,")), "{csv}");
    rows.len()
}

#[test]
fn a_private_ca_is_refused_until_ca_file_names_it() {
    let p = Project::new();
    let port = Pki::new(&p).serve(false);
    let f = scenario(&p, port, "");
    let out = ladder(&p, &["check", &f]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    for w in ["TLS handshake with 127.0.0.1", "target.tls.ca_file"] {
        assert!(out.stdout.contains(w), "missing `{w}`:\n{}", out.stdout);
    }
    let f = scenario(&p, port, "  tls: {ca_file: certs/ca.pem}\n");
    let out = ladder(&p, &["check", &f]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let out = ladder(&p, &["run", &f, "--no-color"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(all_ok(&p), 3);
    assert!(!out.stderr.contains("insecure"), "{}", out.stderr);
}

/// A CA installed in the system's store (here: `SSL_CERT_FILE`, what `update-ca-certificates`
/// and corporate images provide) is trusted without `ca_file`, by `check` and by every client
/// of a run (the store is read once per run and shared by its clients).
#[test]
fn a_ca_in_the_system_store_is_trusted_without_ca_file() {
    let p = Project::new();
    let port = Pki::new(&p).serve(false);
    let f = scenario(&p, port, "");
    let ca = p.path().join("scenarios/certs/ca.pem");
    for args in [
        vec!["check", f.as_str()],
        vec!["run", f.as_str(), "--no-color"],
    ] {
        let o = p
            .ladder()
            .args(&args)
            .env("SSL_CERT_FILE", &ca)
            .env_remove("SSL_CERT_DIR")
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
        );
        assert_eq!(o.status.code(), Some(0), "{args:?}: {stdout}{stderr}");
    }
    assert_eq!(all_ok(&p), 3);
}

#[test]
fn insecure_accepts_any_certificate_and_warns_on_every_run() {
    let p = Project::new();
    let port = Pki::new(&p).serve(false);
    let f = scenario(&p, port, "  tls: {insecure: true}\n");
    for args in [vec!["check", &f], vec!["run", &f, "--no-color"]] {
        let out = ladder(&p, &args);
        assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
        assert!(
            out.stderr.contains("warning: target.tls.insecure is true"),
            "{args:?}: {}",
            out.stderr
        );
    }
    assert_eq!(all_ok(&p), 3);
}

#[test]
fn mutual_tls_needs_the_client_certificate() {
    let p = Project::new();
    let port = Pki::new(&p).serve(true);
    let f = scenario(&p, port, "  tls: {ca_file: certs/ca.pem}\n");
    let out = ladder(&p, &["check", &f]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("client_cert"), "{}", out.stdout);
    let tls = "  tls:\n    ca_file: certs/ca.pem\n    client_cert: certs/client.pem\n    client_key: certs/client.key\n";
    let f = scenario(&p, port, tls);
    let out = ladder(&p, &["check", &f]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let out = ladder(&p, &["run", &f, "--no-color"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(all_ok(&p), 3);
}

#[test]
fn validate_names_a_missing_or_non_pem_tls_file() {
    let p = Project::new();
    Pki::new(&p);
    std::fs::write(
        p.path().join("scenarios/certs/bad.pem"),
        "not a certificate",
    )
    .unwrap();
    for (tls, words) in [
        (
            "  tls: {ca_file: certs/none.pem}\n",
            vec!["target.tls.ca_file", "cannot read", "none.pem"],
        ),
        (
            "  tls: {ca_file: certs/bad.pem}\n",
            vec!["target.tls.ca_file", "is not a PEM certificate"],
        ),
        (
            "  tls: {client_cert: certs/client.pem}\n",
            vec!["target.tls.client_cert", "add client_key"],
        ),
    ] {
        let f = scenario(&p, 1, tls);
        let out = ladder(&p, &["validate", &f]);
        assert_eq!(out.code, 2, "{tls}: {}{}", out.stdout, out.stderr);
        for w in words {
            assert!(
                out.stderr.contains(w),
                "{tls}: missing `{w}` in {}",
                out.stderr
            );
        }
    }
}

/// Issue 19 §9: an X.509 version 1 client certificate (what `openssl x509 -req` makes without
/// extensions) is the scenario's fault: `run` refuses it before traffic with exit 2, naming
/// the field and how to make a version 3 one, and leaves no run directory. (`make compat` does
/// the same with a certificate openssl made, through nginx.)
#[test]
fn a_version_1_client_certificate_is_refused_before_traffic() {
    let p = Project::new();
    // SEQUENCE { SEQUENCE { INTEGER … } }: a tbsCertificate without the version field.
    let v1 = "-----BEGIN CERTIFICATE-----\nMAMwAQI=\n-----END CERTIFICATE-----\n";
    std::fs::create_dir_all(p.path().join("scenarios/certs")).unwrap();
    std::fs::write(p.path().join("scenarios/certs/v1.pem"), v1).unwrap();
    let key = "-----BEGIN PRIVATE KEY-----\nMAMwAQI=\n-----END PRIVATE KEY-----\n";
    std::fs::write(p.path().join("scenarios/certs/v1.key"), key).unwrap();
    let f = scenario(
        &p,
        1,
        "  tls: {client_cert: certs/v1.pem, client_key: certs/v1.key}\n",
    );
    let out = ladder(&p, &["run", &f]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    for w in ["target.tls.client_cert", "X.509 version 1", "version 3"] {
        assert!(out.stderr.contains(w), "missing `{w}` in {}", out.stderr);
    }
    assert!(
        p.run_dirs("tls").is_empty(),
        "a refused run left a directory"
    );
}

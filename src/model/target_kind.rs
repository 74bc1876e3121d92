//! Whether a run measured a hosted API or a server the user runs: the one rule behind which
//! lever a capacity plan names. Against a hosted API the cap a knee shows is the account's (or
//! the provider's per-key queue), so more capacity is asked of the provider (a concurrency,
//! RPM or TPM limit, or more keys); against a server the user runs it is one copy's, and more
//! capacity is more replicas. The known providers' API hosts live here, and `check`'s key
//! inspection reads them too. Pure.

use reqwest::Url;
use serde::Serialize;

/// API hosts of hosted providers (the host or any subdomain of it) and the provider's name.
const PROVIDER_HOSTS: &[(&str, &str)] = &[
    ("anthropic.com", "Anthropic"),
    ("openrouter.ai", "OpenRouter"),
    ("openai.com", "OpenAI"),
    ("openai.azure.com", "Azure OpenAI"),
    ("groq.com", "Groq"),
    ("x.ai", "xAI"),
    ("googleapis.com", "Google"),
    ("huggingface.co", "Hugging Face"),
    ("perplexity.ai", "Perplexity"),
    ("nvidia.com", "NVIDIA"),
    ("deepseek.com", "DeepSeek"),
    ("mistral.ai", "Mistral"),
    ("together.xyz", "Together AI"),
    ("fireworks.ai", "Fireworks AI"),
    ("cohere.com", "Cohere"),
    ("amazonaws.com", "AWS"),
];

/// What kind of target a run measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum TargetKind {
    /// A known provider's API: its limits are the account's.
    Hosted { provider: String },
    /// A server the user runs: the embedded simulator, or an address on this machine or a
    /// private network.
    SelfRun { basis: SelfRunBasis },
    /// A public host ladder does not know: a gateway, a smaller provider or a server the user
    /// runs in the open.
    Unknown { host: String },
}

/// Why a target is taken to be a server the user runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SelfRunBasis {
    Simulator,
    /// Loopback, a private IPv4 range, a unique-local IPv6 address, or a name that resolves only
    /// inside a network (`localhost`, `.local`, `.internal`, `.svc`, `.cluster.local`).
    PrivateAddress,
}

impl TargetKind {
    /// The kind of a target reached at `base_url`.
    pub fn of_base_url(base_url: &str) -> TargetKind {
        let Some(host) = Url::parse(base_url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
        else {
            return TargetKind::Unknown {
                host: base_url.to_string(),
            };
        };
        if let Some(provider) = provider_of_host(&host) {
            return TargetKind::Hosted {
                provider: provider.to_string(),
            };
        }
        if is_private(&host) {
            return TargetKind::SelfRun {
                basis: SelfRunBasis::PrivateAddress,
            };
        }
        TargetKind::Unknown { host }
    }

    /// "OpenAI's API", "a server you run (the embedded simulator)", "api.example.com (not a
    /// provider ladder knows: a gateway, or a server you run)".
    pub fn describe(&self) -> String {
        match self {
            TargetKind::Hosted { provider } => format!("{provider}'s API"),
            TargetKind::SelfRun {
                basis: SelfRunBasis::Simulator,
            } => "a server you run (the embedded simulator)".into(),
            TargetKind::SelfRun {
                basis: SelfRunBasis::PrivateAddress,
            } => "a server you run (a private address)".into(),
            TargetKind::Unknown { host } => {
                format!("{host} (not a provider ladder knows: a gateway, a hosted API or a server you run)")
            }
        }
    }
}

/// The provider whose API `host` belongs to, when it is one of the known ones.
pub fn provider_of_host(host: &str) -> Option<&'static str> {
    let host = host.to_ascii_lowercase();
    let host = host.trim_end_matches('.');
    // The longest matching suffix: `openai.azure.com` before a shorter one.
    PROVIDER_HOSTS
        .iter()
        .filter(|(suffix, _)| host == *suffix || host.ends_with(&format!(".{suffix}")))
        .max_by_key(|(suffix, _)| suffix.len())
        .map(|(_, provider)| *provider)
}

fn is_private(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<std::net::IpAddr>() {
        return match ip {
            std::net::IpAddr::V4(v4) => v4.is_loopback() || v4.is_private() || v4.is_link_local(),
            std::net::IpAddr::V6(v6) => v6.is_loopback() || (v6.segments()[0] & 0xfe00) == 0xfc00,
        };
    }
    host == "localhost"
        || [
            ".localhost",
            ".local",
            ".internal",
            ".svc",
            ".cluster.local",
            ".lan",
        ]
        .iter()
        .any(|s| host.ends_with(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosted(p: &str) -> TargetKind {
        TargetKind::Hosted { provider: p.into() }
    }

    #[test]
    fn known_provider_hosts_are_hosted() {
        for (url, p) in [
            ("https://api.openai.com/v1", "OpenAI"),
            ("https://API.Anthropic.com", "Anthropic"),
            ("https://myres.openai.azure.com/openai", "Azure OpenAI"),
            ("https://api.deepseek.com/v1", "DeepSeek"),
            ("https://openrouter.ai/api/v1", "OpenRouter"),
            (
                "https://generativelanguage.googleapis.com/v1beta/openai",
                "Google",
            ),
        ] {
            assert_eq!(TargetKind::of_base_url(url), hosted(p), "{url}");
        }
        // A look-alike is not the provider.
        assert!(matches!(
            TargetKind::of_base_url("https://notopenai.com/v1"),
            TargetKind::Unknown { .. }
        ));
    }

    #[test]
    fn private_addresses_are_self_run_and_other_hosts_unknown() {
        let private = TargetKind::SelfRun {
            basis: SelfRunBasis::PrivateAddress,
        };
        for url in [
            "http://127.0.0.1:8000/v1",
            "http://localhost:11434/v1",
            "http://10.2.3.4/v1",
            "http://192.168.1.20:8080/v1",
            "http://172.20.0.5/v1",
            "http://[::1]:8000/v1",
            "http://[fd00::5]/v1",
            "http://vllm.default.svc.cluster.local:8000/v1",
            "http://gpu-box.internal/v1",
        ] {
            assert_eq!(TargetKind::of_base_url(url), private, "{url}");
        }
        assert_eq!(
            TargetKind::of_base_url("https://llm.example.com/v1"),
            TargetKind::Unknown {
                host: "llm.example.com".into()
            }
        );
        assert!(matches!(
            TargetKind::of_base_url("not a url"),
            TargetKind::Unknown { .. }
        ));
        // 172.32/12 is public.
        assert!(matches!(
            TargetKind::of_base_url("http://172.32.0.1/v1"),
            TargetKind::Unknown { .. }
        ));
    }

    #[test]
    fn each_kind_says_what_it_is() {
        assert_eq!(hosted("OpenAI").describe(), "OpenAI's API");
        let sim = TargetKind::SelfRun {
            basis: SelfRunBasis::Simulator,
        };
        assert!(sim.describe().contains("simulator"));
        let json = serde_json::to_value(hosted("OpenAI")).unwrap();
        assert_eq!(json["kind"], "hosted");
        assert_eq!(json["provider"], "OpenAI");
    }
}

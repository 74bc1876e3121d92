//! The Kubernetes manifests in `deploy/k8s/` are product too: they cannot be applied here (no
//! cluster), so this parses them as YAML and checks every field the Indexed Job, the merge Job
//! and the shared volume need to work together, and validates the scenario they mount.

use crate::support::Project;
use serde_yaml::Value;
use std::path::{Path, PathBuf};

fn deploy_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/k8s")
}

fn load(name: &str) -> Value {
    let path = deploy_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `v["a"]["b"]...` that panics with the path when a field is missing.
fn at<'a>(v: &'a Value, path: &[&str]) -> &'a Value {
    let mut cur = v;
    for (i, key) in path.iter().enumerate() {
        cur = cur
            .get(*key)
            .unwrap_or_else(|| panic!("missing field {}", path[..=i].join(".")));
    }
    cur
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    at(v, path)
        .as_str()
        .unwrap_or_else(|| panic!("{} is not a string", path.join(".")))
}

fn seq<'a>(v: &'a Value, path: &[&str]) -> &'a [Value] {
    at(v, path)
        .as_sequence()
        .unwrap_or_else(|| panic!("{} is not a list", path.join(".")))
}

fn container(job: &Value) -> &Value {
    let cs = seq(job, &["spec", "template", "spec", "containers"]);
    assert_eq!(cs.len(), 1, "one container");
    &cs[0]
}

fn args(job: &Value) -> Vec<String> {
    seq(container(job), &["args"])
        .iter()
        .map(|a| a.as_str().expect("args are strings").to_string())
        .collect()
}

fn env<'a>(job: &'a Value, name: &str) -> &'a Value {
    seq(container(job), &["env"])
        .iter()
        .find(|e| e.get("name").and_then(Value::as_str) == Some(name))
        .unwrap_or_else(|| panic!("env {name} not set"))
}

/// The volume mounted at the start of `path`, and its mount path.
fn volume_for<'a>(job: &'a Value, path: &str) -> (&'a Value, String) {
    let mount = seq(container(job), &["volumeMounts"])
        .iter()
        .find(|m| path.starts_with(str_at(m, &["mountPath"])))
        .unwrap_or_else(|| panic!("{path} is on no mounted volume"));
    let name = str_at(mount, &["name"]);
    let vol = seq(job, &["spec", "template", "spec", "volumes"])
        .iter()
        .find(|v| v.get("name").and_then(Value::as_str) == Some(name))
        .unwrap_or_else(|| panic!("volume {name} is mounted but not declared"));
    (vol, str_at(mount, &["mountPath"]).to_string())
}

fn flag_value(args: &[String], flag: &str) -> String {
    let i = args
        .iter()
        .position(|a| a == flag)
        .unwrap_or_else(|| panic!("{flag} missing in {args:?}"));
    args[i + 1].clone()
}

#[test]
fn shard_job_is_an_indexed_job_with_scenario_key_and_shared_results() {
    let job = load("shards-job.yaml");
    assert_eq!(str_at(&job, &["apiVersion"]), "batch/v1");
    assert_eq!(str_at(&job, &["kind"]), "Job");
    assert_eq!(str_at(&job, &["spec", "completionMode"]), "Indexed");
    let completions = at(&job, &["spec", "completions"]).as_u64().unwrap();
    let parallelism = at(&job, &["spec", "parallelism"]).as_u64().unwrap();
    assert_eq!(completions, parallelism, "every shard must run at once");
    let shards: u64 = str_at(env(&job, "LADDER_SHARDS"), &["value"])
        .parse()
        .expect("LADDER_SHARDS is a number");
    assert_eq!(shards, completions, "LADDER_SHARDS must equal completions");
    assert_eq!(
        str_at(&job, &["spec", "template", "spec", "restartPolicy"]),
        "Never"
    );

    let a = args(&job);
    assert_eq!(a[0], "run");
    // The scenario comes from the ConfigMap volume.
    let (vol, _) = volume_for(&job, &a[1]);
    assert_eq!(str_at(vol, &["configMap", "name"]), "ladder-scenario");
    // Results go to the shared claim, under the run id.
    let out = flag_value(&a, "--out");
    assert!(out.contains("$(LADDER_RUN_ID)"), "{out}");
    let (vol, _) = volume_for(&job, &out);
    let claim = str_at(vol, &["persistentVolumeClaim", "claimName"]);
    let pvc = load("results-pvc.yaml");
    assert_eq!(str_at(&pvc, &["kind"]), "PersistentVolumeClaim");
    assert_eq!(str_at(&pvc, &["metadata", "name"]), claim);
    let modes = seq(&pvc, &["spec", "accessModes"]);
    assert!(modes.iter().any(|m| m.as_str() == Some("ReadWriteMany")));

    // The key from a Secret, the run id and the common start from the per-run ConfigMap.
    let key = env(&job, "OPENAI_API_KEY");
    assert_eq!(
        str_at(key, &["valueFrom", "secretKeyRef", "name"]),
        "ladder-api-key"
    );
    for var in ["LADDER_RUN_ID", "LADDER_START_AT"] {
        let cm = str_at(env(&job, var), &["valueFrom", "configMapKeyRef", "name"]);
        assert_eq!(cm, "ladder-run", "{var}");
    }
    assert!(!seq(container(&job), &["env"]).iter().any(|e| e
        .get("value")
        .and_then(Value::as_str)
        .is_some()
        && e["name"].as_str() == Some("OPENAI_API_KEY")));
}

#[test]
fn merge_job_reads_what_the_shards_write() {
    let shards = load("shards-job.yaml");
    let merge = load("merge-job.yaml");
    assert_eq!(str_at(&merge, &["kind"]), "Job");
    let a = args(&merge);
    assert_eq!(a[0], "merge");
    let out = flag_value(&args(&shards), "--out");
    assert_eq!(a[1], out, "merge reads the shards' --out");
    assert!(
        a.iter().any(|x| x == "--wait"),
        "merge waits for the shards"
    );
    let merged = flag_value(&a, "-o");
    assert_ne!(merged, out);
    let claim = |job: &Value, path: &str| {
        str_at(
            volume_for(job, path).0,
            &["persistentVolumeClaim", "claimName"],
        )
        .to_string()
    };
    assert_eq!(claim(&merge, &a[1]), claim(&shards, &out));
    assert_eq!(claim(&merge, &merged), claim(&shards, &out));
    assert_eq!(
        str_at(
            env(&merge, "LADDER_RUN_ID"),
            &["valueFrom", "configMapKeyRef", "name"]
        ),
        "ladder-run"
    );
    assert_eq!(
        str_at(container(&merge), &["image"]),
        str_at(container(&shards), &["image"])
    );
}

#[test]
fn the_mounted_scenario_is_valid_and_each_shard_stays_under_one_process_load() {
    let job = load("shards-job.yaml");
    let shards = at(&job, &["spec", "completions"]).as_u64().unwrap();
    let scenario = load("scenario.yaml");
    let key = str_at(&scenario, &["target", "api_key"]);
    assert_eq!(key, "${OPENAI_API_KEY}", "the Secret's variable");
    let top = seq(&scenario, &["load", "ladder"])
        .iter()
        .filter_map(Value::as_u64)
        .max()
        .unwrap();
    assert_eq!(top, 100_000, "the README promises a 100,000-stream test");
    assert!(
        top.div_ceil(shards) <= 10_000,
        "one pod drives ≤ 10,000 streams"
    );

    // The ConfigMap holds scenario.yaml and the prompt beside it; validate as `ladder` would.
    let p = Project::new();
    for f in ["scenario.yaml", "prompt.txt"] {
        std::fs::copy(deploy_dir().join(f), p.path().join(f)).unwrap();
    }
    p.ladder()
        .args(["validate", "scenario.yaml"])
        .env_remove("OPENAI_API_KEY")
        .assert()
        .success();
}

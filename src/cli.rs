//! Command-line definitions (clap derive). No logic: `app` turns these into actions.

use crate::dialect::Api;
use crate::scenario::LimitField;
use clap::builder::TypedValueParser as _;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "ladder",
    version,
    about = "Load-test LLM APIs: concurrency ladders, CSV baselines, noise-aware regression gates",
    long_about = None,
    after_help = "Exit codes: 0 ok, 1 runtime error / incompatible baseline / interrupted, 2 usage or invalid input, 3 regression, 4 inconclusive."
)]
pub struct Cli {
    /// Print only results (no progress line, no notes).
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// Disable colors (also honoured: the NO_COLOR environment variable).
    #[arg(long, global = true)]
    pub no_color: bool,
    /// More detail on stderr (repeat for more).
    #[arg(long, short, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run each scenario's concurrency ladder and write a run directory.
    #[command(
        override_usage = "ladder run [OPTIONS] <SCENARIO>...\n       ladder run [OPTIONS] --base-url <URL> --model <MODEL>   (no file: flags only)",
        after_help = "Examples:\n  ladder run scenarios/demo.yaml\n  ladder run --base-url http://localhost:8000/v1 --model my-model --ladder 1,8,32"
    )]
    Run(Box<RunArgs>),
    /// Compare a run (or baseline) with a baseline: per model × step × metric verdicts.
    Diff(DiffArgs),
    /// Parse and check scenario files without sending any traffic.
    Validate(ValidateArgs),
    /// Rebuild a run directory's summary.csv and findings.json from its requests.csv (e.g. a
    /// run killed before it finished); says whether the run is complete and where it stopped.
    Summarize(SummarizeArgs),
    /// Serve the embedded simulated LLM API in the foreground.
    Sim(SimArgs),
    /// Send one tiny request per target/model and explain in plain words what is wrong.
    Check(CheckArgs),
    /// Write a self-contained HTML report of runs (charts, findings, verdicts), or a trend.
    Report(ReportArgs),
    /// Capacity for a target rate from a run's measurements (Little's law) vs declared limits.
    Plan(PlanArgs),
    /// Read production's request logs as a ladder: in-flight levels, the knee and the 429 wall
    /// by the run's rules, a per-minute timeline and the incident in one sentence; writes a run
    /// directory that `report`, `plan` and `diff` read like any run.
    Logs(LogsArgs),
    /// Merge the run directories of the shards of one sharded run (`run --shard I/N`) into one
    /// run directory: exact percentiles from the union of the records.
    Merge(MergeArgs),
    /// Print the JSON Schema of the scenario format (for editor completion and validation).
    Schema,
    /// Print a shell completion script.
    Completions(CompletionsArgs),
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Scenario file whose target (every model) to check.
    #[arg(value_name = "SCENARIO", conflicts_with_all = ["base_url", "from"])]
    pub scenario: Option<PathBuf>,
    /// Check this base URL instead of a scenario's (e.g. https://api.openai.com/v1); with
    /// --from, overrides the file's base URL.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Model to ask for (repeatable); with a scenario, replaces its models.
    #[arg(long, value_name = "MODEL")]
    pub model: Vec<String>,
    /// API dialect for --base-url (default openai-chat) or --from (default: anthropic-messages
    /// for a Claude Code settings.json, openai-chat for a Codex auth.json, the provider's
    /// wire_api for a Codex config.toml: responses → openai-responses, chat → openai-chat).
    #[arg(long, value_parser = api_parser())]
    pub api: Option<Api>,
    /// Environment variable holding the API key for --base-url (default OPENAI_API_KEY, or
    /// ANTHROPIC_API_KEY with --api anthropic-messages); with --from a Codex config.toml, over
    /// the provider's env_key.
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,
    /// Read base URL, key and model from a Claude Code settings.json (env.ANTHROPIC_BASE_URL,
    /// ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN, ANTHROPIC_MODEL), a Codex CLI auth.json
    /// (OPENAI_API_KEY; base URL https://api.openai.com/v1 unless --base-url; --model needed), or
    /// a Codex config.toml (model, model_provider, [model_providers.<id>] base_url, wire_api,
    /// env_key, query_params, http_headers; profiles; auth.json for the built-in openai). A
    /// directory is read as Codex's home; `--from codex` reads $CODEX_HOME (default ~/.codex);
    /// `--from claude` reads Claude Code's settings as Claude Code does (.claude/settings.local.json,
    /// .claude/settings.json, then $CLAUDE_CONFIG_DIR or ~/.claude settings.json; apiKeyHelper).
    #[arg(long, value_name = "FILE")]
    pub from: Option<PathBuf>,
    /// With --from a Codex config.toml: use [profiles.NAME] instead of the file's `profile`.
    #[arg(long, value_name = "NAME", requires = "from")]
    pub profile: Option<String>,
    /// Give up on a target after this long.
    #[arg(long, default_value = "20s", value_parser = parse_duration)]
    pub timeout: std::time::Duration,
    /// The body field that carries the output-token limit (request.max_tokens_field; default
    /// max_completion_tokens for openai-chat).
    #[arg(long, value_name = "FIELD", value_parser = limit_field_parser())]
    pub max_tokens_field: Option<LimitField>,
}

/// `--max-tokens-field`: one of the limit fields the dialects list (`scenario::LimitField`).
fn limit_field_parser() -> impl clap::builder::TypedValueParser<Value = LimitField> {
    clap::builder::PossibleValuesParser::new(LimitField::names())
        .map(|name| LimitField::parse(&name).unwrap_or(LimitField::default_for(Api::default())))
}

/// `--api`: one of the dialects' names.
fn api_parser() -> impl clap::builder::TypedValueParser<Value = Api> {
    clap::builder::PossibleValuesParser::new(Api::names())
        .map(|name| Api::from_name(&name).unwrap_or_default())
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell.
    pub shell: clap_complete::Shell,
}

fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    crate::util::duration::parse(s)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DiffFormatArg {
    Table,
    Markdown,
    Json,
    Junit,
}

#[derive(Debug, Args)]
pub struct GateArgs {
    /// Exit 4 (inconclusive) when any gate was skipped for lack of samples or any check was
    /// inconclusive (its CI spans 0 and reaches past the gate); by default exit 4 only when no
    /// latency gate could decide.
    #[arg(long)]
    pub strict: bool,
    /// Judge even when the two sides ran different workloads (different fingerprints).
    #[arg(long)]
    pub allow_different_workload: bool,
    /// Do not append the markdown verdict to the file named by $GITHUB_STEP_SUMMARY (GitHub
    /// Actions sets it; the verdict then shows on the job's summary page).
    #[arg(long)]
    pub no_step_summary: bool,
    /// Print every check (the table format's per-model tables; markdown's table of gated
    /// checks). By default the verdict is short: what was judged, what could not be decided and
    /// why, and the regressed and inconclusive checks. JSON and JUnit always hold every check.
    #[arg(long)]
    pub full: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Scenario files (YAML). Without one, --base-url and --model describe an ad-hoc run.
    #[arg(value_name = "SCENARIO")]
    pub scenarios: Vec<PathBuf>,
    #[command(flatten)]
    pub overrides: OverrideArgs,
    /// Write the scenario as run (ad hoc, or the file with these flags applied) to FILE, ready to
    /// commit: `ladder run FILE` then runs the same workload (same fingerprint).
    #[arg(long, value_name = "FILE")]
    pub save_scenario: Option<PathBuf>,
    /// In a multi-model run, judge model B against model A step by step (verdicts with
    /// confidence intervals, after the side-by-side table); repeatable, e.g. --pair gpt-4o=gpt-4.1.
    /// Overrides the scenario's `compare: {baseline: A}`.
    #[arg(long = "pair", value_name = "A=B")]
    pub pairs: Vec<crate::compare::Pair>,
    /// Where run directories go: DIR/<scenario>/<UTC timestamp>/ (`-o`, as in `merge` and
    /// `report`).
    #[arg(short = 'o', long, default_value = "runs", value_name = "DIR")]
    pub out: PathBuf,
    /// Also write the scenario's baseline files. Plain, it replaces them and removes a pool of
    /// earlier runs (baselines/<scenario>.runs/, saying so); with --append or the scenario's
    /// `baselines: {keep: K}` above 1, the run joins that pool instead. With --against, the
    /// baseline is written only when the gate passes (exit 0).
    #[arg(long)]
    pub save_baseline: bool,
    /// With --save-baseline --against: replace the baseline even when the gate did not pass.
    #[arg(long, requires = "save_baseline")]
    pub force: bool,
    /// With --save-baseline: keep this run beside the earlier ones, a pooled baseline of the last
    /// K runs (the scenario's `baselines: {keep: K}`, default 5) in baselines/<scenario>.runs/.
    /// With 3 or more runs, each check is widened by the run-to-run spread measured over them.
    #[arg(long, requires = "save_baseline")]
    pub append: bool,
    /// Baselines directory (default: `baselines/` beside the scenario's folder).
    #[arg(long, value_name = "DIR")]
    pub baselines: Option<PathBuf>,
    /// After the run, diff it against this baseline (CSV or run directory) and exit with the
    /// diff's code: a one-command CI gate.
    #[arg(long, value_name = "BASELINE")]
    pub against: Option<PathBuf>,
    /// When the verdict (of --against, or of an A/B run) is a regression or decides nothing,
    /// run the steps concerned again after a pause and decide each concerned check on the rerun
    /// and both measurements pooled: a regression stands only when both show it.
    #[arg(long)]
    pub confirm: bool,
    /// With --confirm: the most requests the rerun may send (default: as many as the run sent);
    /// the regressed steps go first, and steps that do not fit keep the first verdict.
    #[arg(long, value_name = "N", requires = "confirm")]
    pub confirm_budget: Option<u64>,
    /// With --confirm: the pause before the rerun.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "10s", requires = "confirm")]
    pub confirm_after: std::time::Duration,
    /// Format of the verdict (of `--against`, or of an A/B run). With markdown, json or junit,
    /// stdout holds only that document (the run table and findings go to stderr, or nowhere
    /// with --quiet). Without a verdict, json or markdown prints the run itself (summary rows,
    /// findings, run directory) as that one document.
    #[arg(long, value_enum, default_value = "table")]
    pub format: DiffFormatArg,
    #[command(flatten)]
    pub gates: GateArgs,
    /// Override a simulator parameter for this run (scenarios with `target.sim`), e.g.
    /// `--sim-set tpot=26ms`. Server-side only: the workload fingerprint does not change.
    #[arg(long = "sim-set", value_name = "KEY=VALUE")]
    pub sim_set: Vec<String>,
    /// Send nothing: print what the run would send (requests, input and output tokens,
    /// estimated duration and tokens per minute per step) and the limit warnings, then exit.
    #[arg(long)]
    pub dry_run: bool,
    /// Send the whole plan even when the first requests all fail the same way (401, 403, 404,
    /// connection refused, TLS, out of quota); by default the run stops there and says why.
    #[arg(long)]
    pub no_fail_fast: bool,
    /// Run shard I of N (counting from 0) of a sharded run: this process sends its share of
    /// every step's streams and requests; `ladder merge` joins the shards. Default: from
    /// JOB_COMPLETION_INDEX and LADDER_SHARDS (a Kubernetes Indexed Job).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<crate::shard::ShardSpec>,
    /// Start the first step at this time (RFC 3339, e.g. 2026-11-30T12:00:00Z) and step k at
    /// START + k × --step-every, so that every shard runs step k at the same time.
    #[arg(long, value_name = "TIME", env = "LADDER_START_AT")]
    pub start_at: Option<String>,
    /// Each step's time slot (replaces the pause between steps). With --shard and --start-at
    /// it defaults to ramp-up + duration + pause for `duration:` budgets; request budgets need it.
    #[arg(long, value_name = "DURATION", env = "LADDER_STEP_EVERY", value_parser = parse_duration)]
    pub step_every: Option<std::time::Duration>,
    #[command(flatten)]
    pub telemetry: TelemetryArgs,
}

/// Live metrics during a run (docs/telemetry.md).
#[derive(Debug, Clone, Default, Args)]
pub struct TelemetryArgs {
    /// Serve the run's live metrics for Prometheus at http://ADDR/metrics while the run lasts,
    /// e.g. 127.0.0.1:9464 (port 0 picks a free port, printed on stderr). At the end the run
    /// waits for one more scrape, so the last counts reach Prometheus.
    #[arg(long, value_name = "ADDR")]
    pub metrics_addr: Option<std::net::SocketAddr>,
    /// Push the run's live metrics to this Prometheus remote-write URL every second and at the
    /// end, e.g. http://127.0.0.1:9090/api/v1/write. Credentials come from the environment:
    /// LADDER_REMOTE_WRITE_USERNAME and LADDER_REMOTE_WRITE_PASSWORD (basic auth) or
    /// LADDER_REMOTE_WRITE_TOKEN (bearer), never from the URL.
    #[arg(long, value_name = "URL")]
    pub prometheus_remote_write: Option<String>,
    /// Export the run's metrics over OTLP/HTTP to this collector base URL (e.g.
    /// http://127.0.0.1:4318; /v1/metrics goes under it), with the OpenTelemetry GenAI names.
    /// Sets or replaces the scenario's telemetry.otlp.endpoint; headers, interval and spans
    /// come from telemetry.otlp.
    #[arg(long, value_name = "URL")]
    pub otlp: Option<String>,
    /// With --otlp: OTLP/HTTP JSON instead of protobuf (telemetry.otlp.protocol: http/json).
    #[arg(long)]
    pub otlp_json: bool,
}

/// Scenario fields set from the command line: an ad-hoc run without a file, or overrides of a
/// file's fields, recorded in `scenario.yaml` and in the fingerprint like the same edit.
#[derive(Debug, Args, Default)]
pub struct OverrideArgs {
    /// The server's base URL (target.base_url, e.g. http://localhost:8000/v1); the key comes
    /// from $OPENAI_API_KEY ($ANTHROPIC_API_KEY with --api anthropic-messages) when set.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Model to ask for (repeatable; target.models). Over a scenario: a subset of its models.
    #[arg(long, value_name = "MODEL")]
    pub model: Vec<String>,
    /// API dialect (target.api; default openai-chat).
    #[arg(long, value_parser = api_parser())]
    pub api: Option<Api>,
    /// The ladder (load.ladder), e.g. 1,8,32 (default for an ad-hoc run: 1,8,32).
    #[arg(long, value_name = "LEVELS", value_delimiter = ',')]
    pub ladder: Option<Vec<u32>>,
    /// Requests per step (load.requests_per_step; default for an ad-hoc run: 32).
    #[arg(long, value_name = "N", conflicts_with = "duration")]
    pub requests_per_step: Option<u64>,
    /// Each step's length instead of a request count (load.duration), e.g. 30s.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub duration: Option<std::time::Duration>,
    /// Output tokens asked for (request.max_tokens; default 256).
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u32>,
    /// The body field that carries the limit (request.max_tokens_field; default
    /// max_completion_tokens for openai-chat, whose reasoning models refuse max_tokens).
    #[arg(long, value_name = "FIELD", value_parser = limit_field_parser())]
    pub max_tokens_field: Option<LimitField>,
    /// Ask for whole answers, not streams (request.stream: false): E2E and tokens are
    /// measured, TTFT and TPOT are not.
    #[arg(long)]
    pub no_stream: bool,
    /// File holding the prompt (request.prompt_file; default for an ad-hoc run: a 256-token
    /// synthetic prompt).
    #[arg(long, value_name = "FILE", conflicts_with = "prompt")]
    pub prompt_file: Option<PathBuf>,
    /// The prompt itself (request.prompt: {text: …}).
    #[arg(long, value_name = "TEXT")]
    pub prompt: Option<String>,
    /// An A/B run: models A (the current) and B (the candidate), their requests interleaved at
    /// every step, B gated against A with the diff's rules and exit codes (target.models: [A,
    /// B], compare: {baseline: A, interleave: true}), e.g. --ab gpt-4o=gpt-4.1.
    #[arg(long, value_name = "A=B", conflicts_with = "model")]
    pub ab: Option<crate::compare::Pair>,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Baseline: a baseline CSV (with its .requests.csv sidecar when present) or a run directory
    /// (a folder of runs, e.g. runs/demo, means its latest run).
    pub baseline: PathBuf,
    /// The new result: a run directory or a CSV (a folder of runs, e.g. runs/demo, means its
    /// latest run).
    pub run: PathBuf,
    /// Output: table (terminal), markdown (PR comment, job summary), json (for jq and
    /// scripts) or junit (CI test reports: one test case per gated comparison).
    #[arg(long, value_enum, default_value = "table")]
    pub format: DiffFormatArg,
    #[command(flatten)]
    pub gates: GateArgs,
    /// Take the gates (thresholds) from this scenario file instead of the ones recorded with
    /// the new run (its scenario.yaml; the defaults when it has none).
    #[arg(long, value_name = "SCENARIO")]
    pub gates_from: Option<PathBuf>,
    /// A model upgrade: judge model NEW of the run against model OLD of the baseline as if they
    /// were the same model (repeatable), e.g. --pair gpt-4o=gpt-4.1. The workloads must match
    /// apart from the paired names.
    #[arg(long = "pair", value_name = "OLD=NEW")]
    pub pairs: Vec<crate::compare::Pair>,
}

#[derive(Debug, Args)]
pub struct SummarizeArgs {
    /// A run directory (runs/<scenario>/<timestamp>/).
    #[arg(value_name = "RUN")]
    pub run: PathBuf,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Scenario files (YAML) to parse and check; errors name file, line and field.
    #[arg(required = true, value_name = "SCENARIO")]
    pub scenarios: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SimArgs {
    /// Port to listen on (0 = any free port).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Address to bind.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: std::net::IpAddr,
    /// Simulator parameters as YAML (the same keys as a scenario's `target.sim` block).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Set a parameter, e.g. `--set ttft=200ms --set concurrency_cap=16` (see --list).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// List every parameter (the keys of --set, --sim-set and a scenario's `target.sim`) with
    /// its unit, default and meaning, and exit.
    #[arg(long)]
    pub list: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormatArg {
    Html,
    Markdown,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Run directories or baseline CSVs (a folder of runs, e.g. runs/demo, means its latest
    /// run). With --trend: one baseline CSV tracked in git, or several run directories.
    #[arg(required = true, value_name = "RUN")]
    pub runs: Vec<PathBuf>,
    /// Overlay this baseline (CSV or run directory) and show the verdicts `ladder diff BASELINE
    /// RUN` gives: judged with the gates recorded with each run (its scenario.yaml).
    #[arg(long, value_name = "BASELINE")]
    pub baseline: Option<PathBuf>,
    /// With --baseline: judge with the gates of this scenario instead of those recorded with
    /// each run (as `ladder diff --gates-from`).
    #[arg(long, value_name = "SCENARIO", requires = "baseline")]
    pub gates_from: Option<PathBuf>,
    /// Where to write the page (replacing a file there). Default: report.html (trend.html) in
    /// the first run's directory, or beside the first CSV; an existing page is kept and the new
    /// one written as report-2.html, report-3.html, ... (said on stderr). `--output` is the
    /// older spelling.
    #[arg(short = 'o', long = "out", alias = "output", value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// P90 TTFT and TPOT per step over time: every committed version of a baseline CSV (git
    /// history), or several run directories in order of their start time.
    #[arg(long)]
    pub trend: bool,
    /// `markdown` (with --trend) prints the trend as a table instead of writing a page.
    #[arg(long, value_enum, default_value = "html")]
    pub format: ReportFormatArg,
}

/// `table` like every other command's human-readable output (`text` is the older name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlanFormatArg {
    #[value(alias = "text")]
    Table,
    Json,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("target").required(false).args(["rps", "agents", "tasks_per_hour"])))]
pub struct PlanArgs {
    /// Run directory or baseline CSV (a folder of runs, e.g. runs/demo, means its latest run).
    /// A run `ladder logs` wrote needs no target: its own minutes are sized.
    #[arg(value_name = "RUN")]
    pub run: PathBuf,
    /// Target rate in requests per second.
    #[arg(long, value_name = "N")]
    pub rps: Option<f64>,
    /// Target concurrent agents, from a run of an agent scenario (`load.agent`).
    #[arg(long, value_name = "N")]
    pub agents: Option<u32>,
    /// Target complete agent tasks per hour, from a run of an agent scenario.
    #[arg(long, value_name = "N")]
    pub tasks_per_hour: Option<f64>,
    /// The account's TPM limit leaves out input read from the cache (Anthropic's ITPM on most
    /// models); by default cached input counts toward it, as OpenAI counts it. Agent plans.
    #[arg(long)]
    pub tpm_excludes_cached: bool,
    /// TTFT bound on P90 (default: the run's `slo.ttft`).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub slo_ttft: Option<std::time::Duration>,
    /// TTFC bound on P90: the first answer token, after reasoning (default: the run's
    /// `slo.ttfc`).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub slo_ttfc: Option<std::time::Duration>,
    /// TPOT bound on P90 (default: the run's `slo.tpot`).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub slo_tpot: Option<std::time::Duration>,
    /// E2E bound on P90 (default: the run's `slo.e2e`).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub slo_e2e: Option<std::time::Duration>,
    /// Account limit on concurrent requests (default: the run's `limits.concurrency`).
    #[arg(long, value_name = "N")]
    pub limit_concurrency: Option<u32>,
    /// Account limit on tokens per minute, input + output (default: `limits.tpm`).
    #[arg(long, value_name = "N")]
    pub limit_tpm: Option<u64>,
    /// Account limit on requests per minute (default: `limits.rpm`).
    #[arg(long, value_name = "N")]
    pub limit_rpm: Option<u64>,
    /// Account limit on input tokens per minute, cache reads left out unless the run's
    /// `limits.itpm_cached: counted` (default: `limits.itpm`).
    #[arg(long, value_name = "N")]
    pub limit_itpm: Option<u64>,
    /// Account limit on output tokens per minute (default: `limits.otpm`).
    #[arg(long, value_name = "N")]
    pub limit_otpm: Option<u64>,
    /// Output format: table (a readable plan) or json (the same figures for scripts).
    #[arg(long, value_enum, default_value = "table")]
    pub format: PlanFormatArg,
}

/// The format of a request log (`ladder logs --format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormatArg {
    /// From the file's first bytes.
    Auto,
    /// ladder's own requests.csv.
    Ladder,
    /// CSV with a header; columns named with --map.
    Csv,
    /// One JSON object per line (or a JSON array); keys (dotted paths) named with --map.
    Jsonl,
    /// OpenTelemetry GenAI spans as OTLP JSON.
    Otlp,
    /// LiteLLM's StandardLoggingPayload (one JSON object per line) or spend-log rows.
    Litellm,
    /// Envoy / Envoy AI Gateway JSON access log.
    Envoy,
    /// GuideLLM's benchmarks report (`--output kind=json`): each benchmark of its sweep is a step.
    Guidellm,
    /// AIPerf's per-record export (`profile_export.jsonl`, or the folder of a sweep): each
    /// concurrency or rate it ran is a step.
    Aiperf,
    /// vLLM `bench serve --save-result --save-detailed` JSON, one file per concurrency or rate.
    Vllm,
}

#[derive(Debug, Args)]
pub struct LogsArgs {
    /// Request logs (read together, as one log), or another tool's results (files, or folders
    /// holding them: one run).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "auto")]
    pub format: LogFormatArg,
    /// Which column holds what: `start=ts,ttft_ms=ttfb,e2e_s=duration,model=model,key=team`
    /// (fields: start, end, first_token, ttft, e2e, model, key, status, error, input_tokens,
    /// output_tokens, id; times as epoch s/ms/us/ns or RFC 3339; durations in _ms or _s).
    #[arg(long, value_name = "SPEC")]
    pub map: Option<String>,
    /// Scenario whose name, fingerprint and SLO the production run takes (for goodput, `plan`
    /// and `diff` against a load test of the same scenario).
    #[arg(long, value_name = "SCENARIO")]
    pub scenario: Option<PathBuf>,
    /// TTFT bound on P90 for goodput (default: the scenario's `slo.ttft`).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub slo_ttft: Option<std::time::Duration>,
    /// TPOT bound for goodput (default: the scenario's `slo.tpot`).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub slo_tpot: Option<std::time::Duration>,
    /// E2E bound for goodput (default: the scenario's `slo.e2e`).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub slo_e2e: Option<std::time::Duration>,
    /// Share of requests the log keeps (0.1 for 1 in 10): in-flight counts and rates are
    /// divided by it.
    #[arg(long, value_name = "RATE", default_value_t = 1.0)]
    pub sample_rate: f64,
    /// At most this many in-flight levels per model (counts are rounded to 2, 4, 8, ... to fit).
    #[arg(long, value_name = "N", default_value_t = 12)]
    pub levels: usize,
    /// Successful requests every level needs (default 40, what the P90 gate needs per side;
    /// at least 20, what the knee needs).
    #[arg(long, value_name = "N")]
    pub min_per_level: Option<u64>,
    /// Directory of run directories (the run goes to OUT/<scenario>/<timestamp>/).
    #[arg(long, value_name = "DIR", default_value = "runs")]
    pub out: PathBuf,
    /// Timeline rows printed (minutes are joined to fit; timeline.csv keeps every minute).
    #[arg(long, value_name = "N", default_value_t = 30)]
    pub timeline_rows: usize,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Shard run directories, or folders holding them (searched three levels down).
    #[arg(required = true, value_name = "RUN")]
    pub runs: Vec<PathBuf>,
    /// The merged run directory to create (must not exist, or be empty).
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub out: PathBuf,
    /// Wait up to this long until every shard of the run has finished (N from the shards'
    /// meta.json), e.g. for a merge Job started with the shards; stops waiting once the run's
    /// schedule has ended and the missing shards cannot come any more.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub wait: Option<std::time::Duration>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Command {
        Cli::try_parse_from(args).expect("parses").command
    }

    /// One way to say "where output goes" (`-o/--out`), the older spellings kept (issue 22 §3).
    #[test]
    fn output_flags_are_o_and_out_everywhere_with_the_old_spellings_kept() {
        for args in [
            ["ladder", "run", "s.yaml", "-o", "dir"],
            ["ladder", "run", "s.yaml", "--out", "dir"],
        ] {
            let Command::Run(r) = parse(&args) else {
                panic!()
            };
            assert_eq!(r.out, PathBuf::from("dir"));
        }
        for flag in ["-o", "--out", "--output"] {
            let Command::Report(r) = parse(&["ladder", "report", "runs/x", flag, "p.html"]) else {
                panic!()
            };
            assert_eq!(r.out, Some(PathBuf::from("p.html")), "{flag}");
        }
        for flag in ["-o", "--out"] {
            let Command::Merge(m) = parse(&["ladder", "merge", "runs/x", flag, "m"]) else {
                panic!()
            };
            assert_eq!(m.out, PathBuf::from("m"), "{flag}");
        }
    }

    #[test]
    fn plan_says_table_like_the_other_commands_and_still_takes_text() {
        for (given, want) in [
            (None, PlanFormatArg::Table),
            (Some("table"), PlanFormatArg::Table),
            (Some("text"), PlanFormatArg::Table),
            (Some("json"), PlanFormatArg::Json),
        ] {
            let mut args = vec!["ladder", "plan", "runs/x", "--rps", "10"];
            if let Some(f) = given {
                args.extend(["--format", f]);
            }
            let Command::Plan(p) = parse(&args) else {
                panic!()
            };
            assert_eq!(p.format, want, "{given:?}");
        }
    }
}

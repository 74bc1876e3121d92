//! The HTTP side of the simulator: routes, the admission pipeline every completion goes through
//! (auth → body → model → rate limits → fault draw → generate), and starting/stopping the server.

use super::faults::{self, FaultKind};
use super::limits::{Admission, Ask, Decision, Snapshot};
use super::params::SimParams;
use super::request;
use super::respond;
use super::state::{self, Guard, Shared, SimStats, TruthRecord};
use super::stream::{self, Outcome, Pacer, Plan, TokenStream};
use super::variation;
use super::wire::{Finish, Frames};
use crate::dialect::{Api, Family, KeyHeader};
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Longest TTFT the simulator will schedule (keeps deadline arithmetic far from overflow).
const MAX_TTFT: Duration = Duration::from_secs(86_400);

/// Anthropic streams get an `event: ping` every this many tokens.
const PING_EVERY: u32 = 32;

/// The simulator; [`SimServer::start`] and [`SimServer::serve_forever`] are the same as the free
/// functions [`start`] and [`serve_forever`].
pub struct SimServer;

impl SimServer {
    pub async fn start(params: SimParams, addr: SocketAddr) -> io::Result<SimHandle> {
        start(params, addr).await
    }

    pub async fn serve_forever(params: SimParams, addr: SocketAddr) -> io::Result<()> {
        serve_forever(params, addr).await
    }
}

/// A running simulator. Dropping it also stops the server (gracefully, in the background).
/// Accept queue length requested from the kernel (capped by `net.core.somaxconn`).
const LISTEN_BACKLOG: u32 = 8192;

pub struct SimHandle {
    addr: SocketAddr,
    ctx: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<io::Result<()>>,
}

impl std::fmt::Debug for SimHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimHandle")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl SimHandle {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT/v1` (the bound address; loopback when bound to all interfaces).
    pub fn base_url(&self) -> String {
        let ip = match self.addr.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
            ip => ip,
        };
        format!("http://{}/v1", SocketAddr::new(ip, self.addr.port()))
    }

    pub fn stats(&self) -> SimStats {
        self.ctx.stats()
    }

    pub fn truth(&self) -> Vec<TruthRecord> {
        self.ctx.truth()
    }

    /// Shuts down (see `shutdown`), then reports what the server did, including streams that
    /// were still open when the client went away.
    pub async fn shutdown_and_report(self) -> (SimStats, Vec<TruthRecord>) {
        let ctx = Arc::clone(&self.ctx);
        self.shutdown().await;
        (ctx.stats(), ctx.truth())
    }

    /// Stops accepting connections and waits up to 2 s for open streams, then aborts them.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if tokio::time::timeout(Duration::from_secs(2), &mut self.task)
            .await
            .is_err()
        {
            self.task.abort();
        }
    }
}

/// Binds `addr` (port 0 = a free port), spawns the server on the current tokio runtime and
/// returns at once. Fails on invalid parameters (`InvalidInput`) or when the address is taken.
pub async fn start(params: SimParams, addr: SocketAddr) -> io::Result<SimHandle> {
    let (listener, ctx) = bind(params, addr).await?;
    let addr = listener.local_addr()?;
    let (stop, stopped) = oneshot::channel::<()>();
    let app = router(ctx.clone());
    let task = tokio::spawn(async move {
        axum::serve(listener, app)
            .tcp_nodelay(true)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await
    });
    Ok(SimHandle {
        addr,
        ctx,
        stop: Some(stop),
        task,
    })
}

/// Serves on `addr` until the process ends (for `ladder sim`); prints nothing.
pub async fn serve_forever(params: SimParams, addr: SocketAddr) -> io::Result<()> {
    let (listener, ctx) = bind(params, addr).await?;
    axum::serve(listener, router(ctx)).tcp_nodelay(true).await
}

async fn bind(
    params: SimParams,
    addr: SocketAddr,
) -> io::Result<(tokio::net::TcpListener, Arc<Shared>)> {
    params
        .validate()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    // A deep accept queue: a ladder step starts thousands of connections at once, and the
    // default backlog (1,024) would drop SYNs and measure the kernel's retry timer, not TTFT.
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    let listener = socket.listen(LISTEN_BACKLOG)?;
    Ok((listener, Arc::new(Shared::new(params))))
}

fn router(ctx: Arc<Shared>) -> Router {
    let mut router = Router::new();
    for api in Api::ALL {
        router = router.route(
            &state::route_path(api),
            post(move |s: State<Arc<Shared>>, h: HeaderMap, b: Bytes| complete(s, api, h, b)),
        );
    }
    router
        .route("/v1/models", get(models))
        .route("/sim/stats", get(stats))
        .route("/sim/truth", get(truth))
        .route("/metrics", get(metrics))
        .fallback(fallback)
        .with_state(ctx)
}

fn request_id(ctx: &Shared, headers: &HeaderMap) -> String {
    match headers.get("x-request-id").and_then(|v| v.to_str().ok()) {
        Some(id) if !id.is_empty() => id.to_string(),
        _ => format!("sim-{}", ctx.next_id()),
    }
}

/// Whether a drawn fault has an effect on this kind of request.
fn applies(kind: FaultKind, stream: bool) -> bool {
    stream || !matches!(kind, FaultKind::NoDone | FaultKind::JsonBody)
}

async fn complete(
    State(ctx): State<Arc<Shared>>,
    dialect: Api,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let arrival = Instant::now();
    ctx.count_route(dialect.index());
    let anthropic = dialect.spec().family == Family::Anthropic;
    let rid = request_id(&ctx, &headers);
    let mut truth = TruthRecord {
        request_id: rid.clone(),
        path: state::route_path(dialect),
        arrival_ms: ctx.ms(arrival),
        ..TruthRecord::default()
    };
    let (req, admitted) = match screen(&ctx, dialect, &headers, &body, arrival, &mut truth) {
        Ok(admitted) => admitted,
        Err(rejected) => {
            let (status, response) = *rejected;
            return reject(&ctx, truth, status, response);
        }
    };
    let Planned {
        frames,
        plan,
        mut pacer,
    } = match planned(&ctx, dialect, &req, &mut truth) {
        Ok(p) => p,
        Err(rejected) => {
            let (status, response) = *rejected;
            return reject(&ctx, truth, status, response);
        }
    };
    let fault = plan.fault;
    truth.prefill_ms = Some(plan.ttft.as_secs_f64() * 1000.0);
    let mut guard = Guard::new(ctx.clone(), truth);
    guard.admission = admitted.map(|(_, a)| a);
    let mut response = if req.stream && fault != Some(FaultKind::JsonBody) {
        // Like llama.cpp and vLLM, the headers go out once the request is admitted, so they can
        // carry the true queue time (and the planned prefill) as `Server-Timing`.
        let Some(admitted) = stream::admit(&mut guard, arrival).await else {
            return respond::server_fault(anthropic, FaultKind::Http503, &rid);
        };
        let timing = respond::server_timing(&guard.truth);
        let body = Body::from_stream(TokenStream::new(guard, frames, plan, pacer, admitted));
        let mut r = respond::sse_response(body, &rid);
        r.headers_mut().extend(timing);
        r
    } else {
        let outcome = stream::generate(&mut guard, &plan, &mut pacer, arrival).await;
        let Some(body) = whole_body(outcome, &plan, &frames, anthropic) else {
            let err = io::Error::new(io::ErrorKind::ConnectionAborted, "simulated disconnect");
            let mut r = respond::json_response(200, Vec::new(), &rid);
            *r.body_mut() = Body::from_stream(futures_util::stream::iter([Err::<Bytes, _>(err)]));
            return r;
        };
        let mut r = respond::json_response(200, body, &rid);
        r.headers_mut().extend(respond::server_timing(&guard.truth));
        r
    };
    if let Some((s, _)) = admitted {
        respond::rate_limit_headers(response.headers_mut(), anthropic, &s);
    }
    response
}

/// A rejected request's status and answer (boxed: a `Response` is large).
type Rejected = Box<(u16, Response)>;

/// A request answered with an error: its status recorded in the truth (and counted, below 500
/// and other than 429), the response sent as is.
fn reject(ctx: &Shared, mut truth: TruthRecord, status: u16, response: Response) -> Response {
    truth.status = status;
    if status != 429 && status < 500 {
        ctx.count_rejected(status);
    }
    ctx.record(truth);
    response
}

/// What stands before a request is served: its key, its body, its model, and the rate limits;
/// `Err` with the status and the answer of a rejected one.
fn screen(
    ctx: &Shared,
    dialect: Api,
    headers: &HeaderMap,
    body: &[u8],
    arrival: Instant,
    truth: &mut TruthRecord,
) -> Result<(request::SimRequest, Option<(Snapshot, Admission)>), Rejected> {
    let anthropic = dialect.spec().family == Family::Anthropic;
    let rid = truth.request_id.clone();
    let p = &ctx.params;
    let key = super::auth::api_key(headers, dialect.spec().key_header == KeyHeader::XApiKey);
    if let Err(got) = super::auth::check_auth(p, key.as_deref()) {
        return Err(Box::new((
            401,
            respond::unauthorized(anthropic, &got, &rid),
        )));
    }
    let mut req = match request::parse(dialect, body) {
        Ok(r) => r,
        Err(msg) => return Err(Box::new((400, respond::bad_request(anthropic, &msg, &rid)))),
    };
    // A continued response: its conversation so far is input too.
    if let Some(previous) = &req.previous_response_id {
        match ctx.stored_tokens(previous) {
            Some(tokens) => req.input_tokens += tokens,
            None => {
                let msg = format!("Previous response with id '{previous}' not found.");
                return Err(Box::new((400, respond::bad_request(anthropic, &msg, &rid))));
            }
        }
    }
    truth.model.clone_from(&req.model);
    truth.answers.clone_from(&req.answers);
    if p.known_models_only && !p.knows_model(&req.model) {
        let r = respond::model_not_found(anthropic, &req.model, &rid);
        return Err(Box::new((404, r)));
    }
    let cap = u64::from(p.timing_for(&req.model).output_tokens);
    let ask = Ask {
        input_tokens: req.input_tokens,
        cached_tokens: ctx.cached_tokens(&req.prefix_blocks, req.input_tokens),
        max_tokens: if req.embed.is_some() {
            0
        } else {
            req.max_tokens.unwrap_or(cap)
        },
    };
    match ctx.admit(arrival, key.as_deref(), ask) {
        None => Ok((req, None)),
        Some(Decision::Allowed(s, admission)) => Ok((req, Some((s, admission)))),
        Some(Decision::Limited {
            kind,
            limit,
            retry_after,
            snapshot,
        }) => {
            let refusal = respond::Refusal {
                kind,
                limit,
                retry_after,
            };
            let r = respond::rate_limited(anthropic, &refusal, &snapshot, &rid);
            Err(Box::new((429, r)))
        }
    }
}

/// How an admitted request will be answered.
struct Planned {
    frames: Frames,
    plan: Plan,
    pacer: Pacer,
}

/// Draws the request's variation and fault and plans its answer: tokens, finish reason, TTFT
/// (drift, variation, uncached prefill, hidden reasoning), the pacing of its tokens. `Err` with
/// the status and the answer of a fault that is an HTTP error.
fn planned(
    ctx: &Shared,
    dialect: Api,
    req: &request::SimRequest,
    truth: &mut TruthRecord,
) -> Result<Planned, Rejected> {
    let p = &ctx.params;
    let anthropic = dialect.spec().family == Family::Anthropic;
    let timing = p.timing_for(&req.model);
    let (u, seed) = ctx.draw();
    let v = variation::draw(p, timing.output_tokens, seed);
    let drift = ctx
        .drift
        .at(Duration::from_secs_f64(truth.arrival_ms / 1000.0));
    let drawn = u64::from(v.output_tokens);
    let n = req.max_tokens.map_or(drawn, |m| m.min(drawn)) as u32;
    let finish = if req.max_tokens.is_some_and(|m| m < drawn) {
        Finish::Length
    } else {
        Finish::Stop
    };
    let fault = faults::pick(u, &p.faults).filter(|k| applies(*k, req.stream));
    if let Some(kind) = fault {
        ctx.count_fault(kind);
        truth.fault = Some(kind.name().to_string());
        if let Some(status) = kind.status() {
            let rid = &truth.request_id;
            return Err(Box::new((
                status,
                respond::server_fault(anthropic, kind, rid),
            )));
        }
    }
    truth.status = 200;
    let id = format!("{}sim{}", dialect.spec().id_prefix, ctx.next_id());
    if req.store {
        let output = u64::from(n) + u64::from(p.reasoning_tokens);
        ctx.store_response(id.clone(), req.input_tokens + output);
    }
    let frames = Frames::new(dialect, id, &req.model, ctx.created);
    // Cached prompt tokens cost no prefill (`prefix_cache`); writes are reported where the
    // request asked for caching (Anthropic's `cache_control`), as Anthropic does.
    let cache = ctx.use_prefix_cache(&req.prefix_blocks, req.input_tokens);
    let cached = cache.read;
    let mut frames = frames
        .with_cached(cached)
        .with_cache_written(req.cache_control.then_some(cache.written))
        .with_reasoning(p.reasoning_tokens);
    if let Some(tool) = called(p, req, seed) {
        frames = frames.with_tool_call(tool, n);
        truth.tool_call = frames.call_id();
    }
    // Streamed reasoning goes out as deltas after TTFT; hidden reasoning is decoded within it.
    let streamed = p.stream_reasoning && req.stream && frames.can_stream_reasoning();
    let (frames, streamed_reasoning, hidden_reasoning) = if streamed {
        (frames.streaming_reasoning(), p.reasoning_tokens, 0)
    } else {
        (frames, 0, p.reasoning_tokens)
    };
    let uncached = u32::try_from(req.input_tokens - cached).unwrap_or(u32::MAX);
    let prefill = p
        .prefill_per_token
        .checked_mul(uncached)
        .unwrap_or(MAX_TTFT);
    let base = (timing.ttft, timing.tpot);
    let ttft = first_token(base, drift, v.ttft_factor, prefill, hidden_reasoning);
    let (frames, ttft) = match req.embed {
        Some(e) => embedding(p, e, frames, uncached, drift * v.ttft_factor),
        None => (frames, ttft),
    };
    let plan = Plan {
        n,
        reasoning: streamed_reasoning,
        finish,
        ttft,
        include_usage: req.include_usage,
        input_tokens: req.input_tokens,
        fault,
        stall_for: p.faults.stall_for.min(MAX_TTFT),
        ping_every: if anthropic { PING_EVERY } else { 0 },
    };
    let pacer = Pacer::new(
        scaled(timing.tpot, drift),
        p.tpot_jitter,
        p.saturation,
        p.saturation_from,
        seed,
    );
    Ok(Planned {
        frames,
        plan,
        pacer,
    })
}

/// Time to the first visible token: the base TTFT × the drift and the request's own spread, the
/// uncached prefill, and hidden reasoning decoded at the drifted TPOT before it; at most
/// `MAX_TTFT`.
fn first_token(
    (ttft, tpot): (Duration, Duration),
    drift: f64,
    spread: f64,
    prefill: Duration,
    hidden_reasoning: u32,
) -> Duration {
    let reasoning = scaled(tpot, drift)
        .checked_mul(hidden_reasoning)
        .unwrap_or(MAX_TTFT);
    scaled(ttft, drift * spread)
        .saturating_add(prefill)
        .saturating_add(reasoning)
        .min(MAX_TTFT)
}

/// `d` × `k`, at most `MAX_TTFT`.
fn scaled(d: Duration, k: f64) -> Duration {
    d.mul_f64(k).min(MAX_TTFT)
}

/// An embeddings answer's frames (its texts, vector size and encoding) and its time: a prefill
/// only, `embed_time` + `embed_per_token` × the uncached input tokens, scaled by `factor` (drift
/// and the request's variation, as TTFT is).
fn embedding(
    p: &SimParams,
    e: request::Embed,
    frames: Frames,
    uncached: u32,
    factor: f64,
) -> (Frames, Duration) {
    let time = p
        .embed_per_token
        .checked_mul(uncached)
        .unwrap_or(MAX_TTFT)
        .saturating_add(p.embed_time);
    let dims = e.dimensions.unwrap_or(p.embed_dimensions);
    let frames = frames.with_embedding(e.inputs, dims, e.base64);
    (frames, scaled(time, factor))
}

/// The tool this request's answer calls, if it calls one: always when `tool_choice` requires a
/// call, else for a `tool_call_share` of the requests with tools, drawn from the request's seed.
fn called<'a>(p: &SimParams, req: &'a request::SimRequest, seed: u64) -> Option<&'a str> {
    let tool = req.tool.as_deref()?;
    // A draw of its own from the request's seed (the jitter's generator starts from it too,
    // but a different mix keeps the two apart).
    let u = (seed ^ 0x7f4a_7c15_9e37_79b9).wrapping_mul(0xbf58_476d_1ce4_e5b9) >> 11;
    let share = u as f64 / (1u64 << 53) as f64;
    (req.tool_required || share < p.tool_call_share).then_some(tool)
}

/// The body of a non-streamed answer once generated: the completion, or the fault it carries;
/// `None` for a dropped connection.
fn whole_body(outcome: Outcome, plan: &Plan, frames: &Frames, anthropic: bool) -> Option<Vec<u8>> {
    Some(match (outcome, plan.fault) {
        (Outcome::Dropped, _) => return None,
        (_, Some(FaultKind::Malformed)) => b"{\"id\":\"sim\",\"choices\":[{\"message\":".to_vec(),
        (_, Some(FaultKind::InbandError)) if frames.failed_body().is_some() => {
            frames.failed_body().unwrap_or_default()
        }
        (_, Some(FaultKind::InbandError)) => {
            let message = "The server had an error while processing your request.";
            let v = if anthropic {
                respond::anthropic_error("overloaded_error", "Overloaded")
            } else {
                respond::openai_error(message, "server_error", None)
            };
            v.to_string().into_bytes()
        }
        _ => frames.full_body(plan.n, plan.finish, plan.input_tokens),
    })
}

async fn models(State(ctx): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    ctx.count_route(state::ROUTE_MODELS);
    if let Err(got) = super::auth::check_auth(
        &ctx.params,
        super::auth::api_key(&headers, false).as_deref(),
    ) {
        ctx.count_rejected(401);
        return respond::unauthorized(false, &got, "");
    }
    let data: Vec<_> = ctx
        .params
        .model_names()
        .into_iter()
        .map(|id| json!({"id": id, "object": "model", "created": ctx.created, "owned_by": "ladder-sim"}))
        .collect();
    Json(json!({"object": "list", "data": data})).into_response()
}

async fn stats(State(ctx): State<Arc<Shared>>) -> Response {
    ctx.count_route(state::ROUTE_SIM);
    Json(ctx.stats()).into_response()
}

/// Prometheus text under vLLM's names: requests waiting for a slot, running, KV-cache use
/// (running / cap; 0 without a cap), the counters of finished requests and tokens, and the
/// prefix cache's queried and hit prompt tokens (vLLM V1's `prefix_cache_queries` and
/// `prefix_cache_hits`).
async fn metrics(State(ctx): State<Arc<Shared>>) -> Response {
    let s = ctx.stats();
    let kv = ctx
        .params
        .concurrency_cap
        .map_or(0.0, |cap| s.active as f64 / f64::from(cap.max(1)));
    let model = &ctx.params.model_names().join(",");
    let finished: u64 = Api::ALL
        .into_iter()
        .filter_map(|api| s.requests.get(&state::route_path(api)).copied())
        .sum();
    let text = format!(
        "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n\
         # TYPE vllm:num_requests_waiting gauge\n\
         vllm:num_requests_waiting{{model_name=\"{model}\"}} {}\n\
         # HELP vllm:num_requests_running Number of requests in model execution batches.\n\
         # TYPE vllm:num_requests_running gauge\n\
         vllm:num_requests_running{{model_name=\"{model}\"}} {}\n\
         # HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.\n\
         # TYPE vllm:kv_cache_usage_perc gauge\n\
         vllm:kv_cache_usage_perc{{model_name=\"{model}\"}} {kv}\n\
         # HELP vllm:request_received_total Requests received.\n\
         # TYPE vllm:request_received_total counter\n\
         vllm:request_received_total{{model_name=\"{model}\"}} {finished}\n\
         # HELP vllm:generation_tokens_total Number of generation tokens processed.\n\
         # TYPE vllm:generation_tokens_total counter\n\
         vllm:generation_tokens_total{{model_name=\"{model}\"}} {}\n\
         # HELP vllm:prefix_cache_queries_total Prefix cache queries, in terms of number of queried tokens.\n\
         # TYPE vllm:prefix_cache_queries_total counter\n\
         vllm:prefix_cache_queries_total{{model_name=\"{model}\"}} {}\n\
         # HELP vllm:prefix_cache_hits_total Prefix cache hits, in terms of number of cached tokens.\n\
         # TYPE vllm:prefix_cache_hits_total counter\n\
         vllm:prefix_cache_hits_total{{model_name=\"{model}\"}} {}\n",
        s.queued, s.active, s.tokens_streamed, s.prefix_cache_queries, s.prefix_cache_hits
    );
    let mut r = Response::new(axum::body::Body::from(text));
    r.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    r
}

async fn truth(State(ctx): State<Arc<Shared>>) -> Response {
    ctx.count_route(state::ROUTE_SIM);
    Json(ctx.truth()).into_response()
}

async fn fallback(State(ctx): State<Arc<Shared>>, method: Method, uri: Uri) -> Response {
    ctx.count_route(state::ROUTE_OTHER);
    respond::unknown_path(method.as_str(), uri.path())
}

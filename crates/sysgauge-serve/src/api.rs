//! The JSON side: uploads, the health check, and the API documents
//! (`"schema": 1`) of the views the pages show. Every error is
//! `{"error": "..."}` with the status that says what kind it is; the same
//! error on a page route is a page (`error_at`).

use crate::pool::PoolError;
use crate::{auth, pages, AppState, API_SCHEMA};
use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{FromRequestParts, Path, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use sysgauge_compare::import::{parse_json, ImportContext};
use sysgauge_core::RunRecord;
use sysgauge_store::Inserted;

/// The source stored with an uploaded run (`results list` shows it).
pub const UPLOAD_SOURCE: &str = "upload";

/// An error answer: a status and a message, as JSON.
#[derive(Debug)]
pub(crate) struct ApiError {
    pub status: StatusCode,
    pub message: String,
    /// Extra fields of the body (the stored run of a 409).
    pub extra: Vec<(&'static str, String)>,
    pub headers: Vec<(header::HeaderName, String)>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
            extra: Vec::new(),
            headers: Vec::new(),
        }
    }

    pub fn unauthorized(message: impl Into<String>) -> ApiError {
        let mut e = ApiError::new(StatusCode::UNAUTHORIZED, message);
        e.headers
            .push((header::WWW_AUTHENTICATE, "Bearer".to_string()));
        e
    }

    pub fn database(e: PoolError) -> ApiError {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("the results database did not answer: {e}"),
        )
    }

    /// `resp` with this error's headers added (`WWW-Authenticate`,
    /// `Retry-After`), whatever the body says it in.
    pub fn headers_onto(
        headers: Vec<(header::HeaderName, String)>,
        mut resp: Response,
    ) -> Response {
        for (name, value) in headers {
            if let Ok(v) = HeaderValue::from_str(&value) {
                resp.headers_mut().append(name, v);
            }
        }
        resp
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = serde_json::Map::new();
        body.insert("error".into(), Value::String(self.message));
        for (k, v) in self.extra {
            body.insert(k.into(), Value::String(v));
        }
        let resp = (self.status, Json(Value::Object(body))).into_response();
        ApiError::headers_onto(self.headers, resp)
    }
}

/// Whether `path` is one of the JSON routes (the API and `/health`), whose
/// errors are JSON; every other path is a page, whose errors are pages.
pub(crate) fn is_json_route(path: &str) -> bool {
    path == "/health" || path == "/api" || path.starts_with("/api/")
}

/// `e` as the route at `path` answers errors: JSON on the API, an HTML
/// page elsewhere.
pub(crate) fn error_at(path: &str, e: ApiError) -> Response {
    if is_json_route(path) {
        e.into_response()
    } else {
        pages::PageError(e).into_response()
    }
}

/// The token of a request's `Authorization` header (Bearer, or the
/// password of Basic, which is what a browser sends).
pub(crate) fn presented_token(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    auth::bearer(value)
        .map(str::to_string)
        .or_else(|| auth::basic_password(value))
}

/// The name of the live upload token the request presents.
pub(crate) async fn upload_token(
    state: &Arc<AppState>,
    headers: &HeaderMap,
) -> Result<String, ApiError> {
    let Some(token) = presented_token(headers) else {
        return Err(ApiError::unauthorized(
            "uploading needs a token: send `Authorization: Bearer TOKEN` (make one with `sysgauge serve token add NAME`)",
        ));
    };
    let hash = auth::hash_token(&token);
    let found = state
        .pool
        .run(move |s| s.token_by_hash(&hash))
        .await
        .map_err(ApiError::database)?;
    match found {
        Some(t) if t.revoked_at.is_none() => Ok(t.name),
        Some(t) => Err(ApiError::unauthorized(format!(
            "the token '{}' was revoked",
            t.name
        ))),
        None => Err(ApiError::unauthorized("unknown token")),
    }
}

/// A request that may read, as a handler's argument: every view (API
/// document or page) takes one, so none can forget the check. `E` is how a
/// refusal is answered: JSON, or a page (`PageError`) on the page routes.
pub(crate) struct Reader<E = ApiError>(PhantomData<fn() -> E>);

impl<E> FromRequestParts<Arc<AppState>> for Reader<E>
where
    E: From<ApiError> + IntoResponse,
{
    type Rejection = E;

    async fn from_request_parts(parts: &mut Parts, state: &Arc<AppState>) -> Result<Self, E> {
        may_read(state, &parts.headers).await?;
        Ok(Reader(PhantomData))
    }
}

/// Whether the request may read: always without `--read-token`; else with
/// the read token or any live upload token.
async fn may_read(state: &Arc<AppState>, headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(read_hash) = &state.read_hash else {
        return Ok(());
    };
    let denied = || {
        let mut e = ApiError::unauthorized(
            "this site needs a token to read: send `Authorization: Bearer TOKEN` (or log in with any user name and the token as password)",
        );
        e.headers.push((
            header::WWW_AUTHENTICATE,
            "Basic realm=\"sysgauge\", charset=\"UTF-8\"".to_string(),
        ));
        e
    };
    let Some(token) = presented_token(headers) else {
        return Err(denied());
    };
    if auth::hash_token(&token) == *read_hash {
        return Ok(());
    }
    upload_token(state, headers)
        .await
        .map(|_| ())
        .map_err(|_| denied())
}

/// The workload version today's sysgauge runs for each benchmark id (what
/// `import` takes imported numbers to be of).
fn workload_version(id: &str) -> Option<u32> {
    static VERSIONS: OnceLock<BTreeMap<String, u32>> = OnceLock::new();
    VERSIONS
        .get_or_init(|| {
            sysgauge_registry::benchmarks(&sysgauge_family::family::Options::default())
                .iter()
                .map(|b| (b.id().to_string(), b.describe().workload_version))
                .collect()
        })
        .get(id)
        .copied()
}

/// One run record, checked by the rules `sysgauge import` applies to a
/// JSON record.
pub(crate) fn parse_upload(text: &str) -> Result<RunRecord, String> {
    if !text.trim_start().starts_with('{') {
        return Err(
            "the body must be one run record (a JSON object, as `sysgauge run --json` writes it)"
                .to_string(),
        );
    }
    let ctx = ImportContext {
        source_name: "upload",
        at: chrono::Utc::now(),
        tool_version: env!("CARGO_PKG_VERSION"),
        workload_version: &workload_version,
    };
    let mut runs = parse_json(text, &ctx).map_err(|e| e.to_string())?;
    match runs.len() {
        1 => Ok(runs.remove(0)),
        n => Err(format!(
            "the body holds {n} run records; send one per request"
        )),
    }
}

fn run_url(run_id: &str) -> String {
    format!("/runs/{run_id}")
}

/// `POST /api/runs`: store one run record. Checked in the order that costs
/// least first: the token, the content type, the rate limit, the size,
/// then the record.
pub(crate) async fn upload(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let name = upload_token(&state, &headers).await?;
    let json_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !json_type {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send the run record as `Content-Type: application/json`",
        ));
    }
    if let Err(wait) = state.limit.take(&name) {
        let secs = wait.as_secs_f64().ceil().max(1.0) as u64;
        let mut e = ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "the token '{name}' has made {} this minute, as many as this site takes; try again in {secs} s",
                sysgauge_report::format::counted(state.config.uploads_per_minute as usize, "upload")
            ),
        );
        e.headers.push((header::RETRY_AFTER, secs.to_string()));
        return Err(e);
    }
    let max = state.config.max_upload;
    let too_big = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the run record is larger than this site accepts ({max} bytes; see --max-upload)"
            ),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return Err(too_big());
    }
    let wait = state.config.body_timeout;
    let Ok(read) = tokio::time::timeout(wait, axum::body::to_bytes(body, max)).await else {
        return Err(ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "the run record did not arrive within {} s; nothing was stored",
                wait.as_secs()
            ),
        ));
    };
    let bytes = match read {
        Ok(b) => b,
        Err(e) => {
            let over = std::error::Error::source(&e)
                .is_some_and(|s| s.is::<http_body_util::LengthLimitError>())
                || e.to_string().contains("length limit");
            return Err(if over {
                too_big()
            } else {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    format!("the body could not be read: {e}"),
                )
            });
        }
    };
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| ApiError::new(StatusCode::BAD_REQUEST, "the body is not UTF-8 text"))?;
    let run = parse_upload(text).map_err(|m| ApiError::new(StatusCode::BAD_REQUEST, m))?;
    let run_id = run.run_id.clone();
    let inserted = state
        .pool
        .run(move |s| s.insert_run(&run, UPLOAD_SOURCE))
        .await
        .map_err(ApiError::database)?;
    let url = run_url(&run_id);
    match inserted {
        Inserted::AlreadyPresent(_) => {
            let mut e = ApiError::new(
                StatusCode::CONFLICT,
                format!("run {run_id} is already stored; nothing was changed"),
            );
            e.extra.push(("run_id", run_id));
            e.extra.push(("url", url));
            Err(e)
        }
        Inserted::New(_) | Inserted::Completed { .. } => {
            let mut resp = (
                StatusCode::CREATED,
                Json(json!({"run_id": run_id, "url": url})),
            )
                .into_response();
            if let Ok(v) = HeaderValue::from_str(&url) {
                resp.headers_mut().insert(header::LOCATION, v);
            }
            Ok(resp)
        }
    }
}

/// `GET /health`: 200 when the database answers a query within 5 s, else
/// 503; never needs a token (a load balancer asks it).
pub(crate) async fn health(State(state): State<Arc<AppState>>) -> Response {
    let backend = if state.pool.is_postgres() {
        "postgresql"
    } else {
        "sqlite"
    };
    let answer = tokio::time::timeout(Duration::from_secs(5), state.pool.run(|s| s.ping())).await;
    let (status, database) = match answer {
        Ok(Ok(())) => (StatusCode::OK, "ok".to_string()),
        Ok(Err(e)) => (StatusCode::SERVICE_UNAVAILABLE, e.to_string()),
        Err(_) => (
            StatusCode::SERVICE_UNAVAILABLE,
            "no answer within 5 s".to_string(),
        ),
    };
    let body = json!({
        "schema": API_SCHEMA,
        "status": if status == StatusCode::OK { "ok" } else { "unavailable" },
        "database": database,
        "backend": backend,
        "version": env!("CARGO_PKG_VERSION"),
    });
    (status, Json(body)).into_response()
}

pub(crate) async fn not_found(uri: Uri) -> Response {
    error_at(
        uri.path(),
        ApiError::new(StatusCode::NOT_FOUND, "no such page or API route"),
    )
}

/// A route asked with a method it does not answer (`GET /api/runs`,
/// `POST /`): an error body like every other, not axum's empty one.
pub(crate) async fn method_not_allowed(method: axum::http::Method, uri: Uri) -> Response {
    error_at(
        uri.path(),
        ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            format!("this route does not answer {method} (uploads are POST /api/runs; everything else is GET)"),
        ),
    )
}

/// The longest request target (path and query) answered, in bytes: a
/// comparison of the most machines a page takes, each named at length,
/// fits several times over. Longer ones are answered 414 with a body that
/// says so. (hyper answers targets over 64 KiB itself, before any route
/// sees them, with an empty 414, and heads over its read buffer, about
/// 400 KiB, with an empty 431: its HTTP/1 parser has no setting or hook
/// for either.)
pub(crate) const MAX_TARGET: usize = 16 << 10;

/// Refuse a request target longer than [`MAX_TARGET`] with a body, as the
/// route would answer an error (HTML or JSON).
pub(crate) async fn limit_target(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let len = req
        .uri()
        .path_and_query()
        .map_or(req.uri().path().len(), |p| p.as_str().len());
    if len > MAX_TARGET {
        return error_at(
            req.uri().path(),
            ApiError::new(
                StatusCode::URI_TOO_LONG,
                format!(
                    "the address is {len} bytes long; this site answers {MAX_TARGET} at most (name fewer or shorter machines)"
                ),
            ),
        );
    }
    next.run(req).await
}

/// A JSON document of the API: `"schema"` first, then `doc`'s fields.
fn document(kind: &str, doc: Value) -> Json<Value> {
    let mut out = serde_json::Map::new();
    out.insert("schema".into(), json!(API_SCHEMA));
    out.insert("kind".into(), json!(kind));
    if let Value::Object(m) = doc {
        out.extend(m);
    }
    Json(Value::Object(out))
}

pub(crate) async fn machines(
    State(state): State<Arc<AppState>>,
    _: Reader,
    query: axum::extract::RawQuery,
) -> Result<Json<Value>, ApiError> {
    let view = pages::machines_view(&state, query.0.as_deref(), false).await?;
    Ok(document(
        "machines",
        serde_json::to_value(view).unwrap_or_default(),
    ))
}

pub(crate) async fn run(
    State(state): State<Arc<AppState>>,
    _: Reader,
    run_id: Result<Path<String>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let Path(run_id) = run_id.map_err(pages::path_error)?;
    let run = pages::load_run(&state, &run_id).await?;
    Ok(document("run", json!({ "run": run })))
}

pub(crate) async fn compare(
    State(state): State<Arc<AppState>>,
    _: Reader,
    query: axum::extract::RawQuery,
) -> Result<Json<Value>, ApiError> {
    let (c, _) = pages::comparison(&state, query.0.as_deref()).await?;
    Ok(document(
        "compare",
        json!({ "comparison": serde_json::to_value(&c).unwrap_or_default() }),
    ))
}

pub(crate) async fn case_view(
    State(state): State<Arc<AppState>>,
    _: Reader,
    query: axum::extract::RawQuery,
) -> Result<Json<Value>, ApiError> {
    let view = pages::case_distribution(&state, query.0.as_deref()).await?;
    Ok(document(
        "cases",
        serde_json::to_value(view).unwrap_or_default(),
    ))
}

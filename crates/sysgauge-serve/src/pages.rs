//! The HTML pages and the views behind them (the API serves the same views
//! as JSON).

use crate::api::{may_read, ApiError};
use crate::AppState;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use std::sync::Arc;
use sysgauge_compare::Comparison;
use sysgauge_core::RunRecord;

/// A stored run by its run id.
pub(crate) async fn load_run(state: &Arc<AppState>, run_id: &str) -> Result<RunRecord, ApiError> {
    let key = run_id.trim().to_string();
    if key.is_empty() || key.len() > 128 {
        return Err(ApiError::new(StatusCode::NOT_FOUND, "no such run"));
    }
    let found = state
        .pool
        .run(move |s| match s.resolve_run(&key) {
            Ok(row) => s.load_run(row).map(Some),
            Err(sysgauge_store::StoreError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        })
        .await
        .map_err(ApiError::database)?;
    found.filter(|r| r.run_id == run_id.trim()).ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            format!("no run '{run_id}' is stored"),
        )
    })
}

pub(crate) async fn machines_view(
    _state: &Arc<AppState>,
    _query: Option<&str>,
) -> Result<serde_json::Value, ApiError> {
    Err(ApiError::new(StatusCode::NOT_IMPLEMENTED, "not yet"))
}

pub(crate) async fn comparison(
    _state: &Arc<AppState>,
    _query: Option<&str>,
) -> Result<(Comparison, Vec<RunRecord>), ApiError> {
    Err(ApiError::new(StatusCode::NOT_IMPLEMENTED, "not yet"))
}

pub(crate) async fn case_distribution(
    _state: &Arc<AppState>,
    _query: Option<&str>,
) -> Result<serde_json::Value, ApiError> {
    Err(ApiError::new(StatusCode::NOT_IMPLEMENTED, "not yet"))
}

pub(crate) async fn machines(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    may_read(&state, &headers).await?;
    Ok(Html("sysgauge").into_response())
}

pub(crate) async fn run(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    Path(run_id): Path<String>,
) -> Result<Response, ApiError> {
    may_read(&state, &headers).await?;
    let _ = load_run(&state, &run_id).await?;
    Ok(Html("run").into_response())
}

pub(crate) async fn compare(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    may_read(&state, &headers).await?;
    Ok(Html("compare").into_response())
}

pub(crate) async fn case_view(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    may_read(&state, &headers).await?;
    Ok(Html("cases").into_response())
}

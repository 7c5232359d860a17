//! Resource request handlers: map (verb, path) to the generic registry and render the result.
//! The same code serves namespaces, CRDs and every custom resource.

use crate::http::app::App;
use crate::http::render::{error_response, read_body, render, warning_header, Body, Payload};
use crate::http::request::ResourcePath;
use crate::http::request_body::RequestBody;
use crate::http::watch;
use crate::registry::options::{DeleteOptions, Query};
use crate::registry::resources::ResourceDef;
use crate::registry::{check_identity, check_namespace, Served, UpdateMode, WriteOptions, Written};
use bytes::{BufMut, Bytes, BytesMut};
use crest_api::{meta, ApiError, FieldError, FieldPath, GroupKind};
use crest_apiextensions::customresource::scale::{self, ScalePaths};
use crest_apiextensions::customresource::{FieldValidation, UnknownFields};
use crest_codec::duplicates::Duplicates;
use crest_codec::negotiate::{
    body_format, decode_object, negotiate, BodyFormat, Capabilities, Output,
};
use crest_table::{self as table, IncludeObject};
use http::{Method, Request, Response, StatusCode};
use serde_json::{json, Value};
use std::sync::Arc;

pub(crate) async fn resource(
    app: Arc<App>,
    req: Request<RequestBody>,
    rp: ResourcePath,
    query: &Query,
    accept: Option<&str>,
    pretty: bool,
) -> Result<Response<Body>, ApiError> {
    let Some(def) = app
        .registry
        .lookup(&rp.group, &rp.version, &rp.resource)
        .await?
    else {
        return Err(ApiError::path_not_found());
    };
    // Errors are Status objects in the format negotiated for the resource (protobuf too for
    // built-in kinds).
    let error_caps = Capabilities {
        // Built-in kinds, and every /scale (autoscaling/v1 Scale has its message).
        protobuf: def.crd_name.is_none() || rp.subresource.as_deref() == Some("scale"),
        ..Default::default()
    };
    let Some(warning) = def.deprecation_warning.clone() else {
        return Ok(handle(app, req, rp, def, query, accept, pretty)
            .await
            .unwrap_or_else(|e| {
                error_response(&e, negotiate(accept, error_caps).unwrap_or(Output::Json))
            }));
    };
    // A deprecated version: every answer, errors and watches included, carries the warning,
    // ahead of the request's own (the CRD handler adds it before serving).
    let mut resp = match handle(app, req, rp, def, query, accept, pretty).await {
        Ok(r) => r,
        Err(e) => error_response(&e, negotiate(accept, error_caps).unwrap_or(Output::Json)),
    };
    let own: Vec<http::HeaderValue> = resp
        .headers()
        .get_all(http::header::WARNING)
        .iter()
        .cloned()
        .collect();
    resp.headers_mut().remove(http::header::WARNING);
    if let Some(v) = warning_header(&warning) {
        resp.headers_mut().append(http::header::WARNING, v);
    }
    for v in own {
        resp.headers_mut().append(http::header::WARNING, v);
    }
    Ok(resp)
}

/// The query of a watch of the object `name` by the deprecated `watch/` path: its field
/// selector is `metadata.name=NAME`; one the client gave must select that name.
fn watch_named(query: &Query, name: &str) -> Result<Query, ApiError> {
    match query.get("fieldSelector").filter(|f| !f.is_empty()) {
        Some(f) if crate::authz::selected_name(f).as_deref() != Some(name) => Err(
            ApiError::bad_request("fieldSelector metadata.name doesn't match requested name"),
        ),
        Some(_) => Ok(query.clone()),
        None => Ok(query
            .clone()
            .with("fieldSelector", format!("metadata.name={name}"))),
    }
}

async fn handle(
    app: Arc<App>,
    req: Request<RequestBody>,
    rp: ResourcePath,
    def: Arc<ResourceDef>,
    query: &Query,
    accept: Option<&str>,
    pretty: bool,
) -> Result<Response<Body>, ApiError> {
    let ns = rp.namespace.as_deref();
    // Wrong scope is a 404, as no such route exists upstream.
    if ns.is_some() && !def.api.namespaced {
        return Err(ApiError::path_not_found());
    }
    if def.api.namespaced && ns.is_none() && (rp.name.is_some() || req.method() != Method::GET) {
        return Err(ApiError::path_not_found());
    }
    if let Some(sub) = &rp.subresource {
        if !def.api.subresources.iter().any(|s| s == sub) {
            // The custom resource handler answers an unknown subresource as a missing object.
            if def.crd_name.is_some() {
                return Err(ApiError::not_found(
                    &def.api.group_resource(),
                    rp.name.as_deref().unwrap_or_default(),
                ));
            }
            return Err(ApiError::path_not_found());
        }
    }
    if rp.watch && (req.method() != Method::GET || rp.subresource.is_some()) {
        return Err(ApiError::path_not_found());
    }
    let method = req.method().clone();
    let read_caps = Capabilities {
        table: true,
        metadata: true,
        aggregated_discovery: false,
        // Built-in kinds, and every /scale (autoscaling/v1 Scale has its message).
        protobuf: def.crd_name.is_none() || rp.subresource.as_deref() == Some("scale"),
    };
    // Writes answer with a Table or PartialObjectMetadata too when asked, as upstream's
    // transformResponseObject does for every verb.
    let write_caps = read_caps;
    let user_agent = req
        .headers()
        .get(http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let user = req
        .extensions()
        .get::<Arc<crest_auth::cache::Authenticated>>()
        .cloned();
    let ctx = Ctx {
        app: app.clone(),
        def: def.clone(),
        query,
        pretty,
        warnings: Default::default(),
        user_agent,
        user,
    };
    if rp.watch {
        // The deprecated `watch/` paths, as upstream's ListResource with forceWatch: a watch of
        // the list, or of the one object named (a field selector on metadata.name).
        let query = match rp.name.as_deref() {
            Some(name) => watch_named(query, name)?,
            None => query.clone(),
        };
        let out = negotiate(accept, read_caps)?;
        return watch::serve(app, def, ns.map(str::to_string), &query, out).await;
    }
    match (&method, rp.name.as_deref()) {
        (&Method::GET, Some(name)) => {
            let out = negotiate(accept, read_caps)?;
            if rp.subresource.as_deref() == Some("scale") {
                return ctx.get_scale(ns, name, out).await;
            }
            ctx.get(ns, name, out).await
        }
        (&Method::GET, None) => {
            let out = negotiate(accept, read_caps)?;
            if query.bool("watch")? {
                return watch::serve(app, def, ns.map(str::to_string), query, out).await;
            }
            ctx.list(ns, out).await
        }
        (&Method::POST, None) => {
            let ctype = req
                .headers()
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            let out = negotiate(accept, write_caps)?;
            let body = read_body(req.into_body()).await;
            ctx.create(ns, body?, body_format(ctype.as_deref()), out)
                .await
        }
        _ => {
            let ctype = req
                .headers()
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            let out = negotiate(accept, write_caps)?;
            let name = rp.name.clone().unwrap_or_default();
            let sub = rp.subresource.as_deref();
            match method {
                Method::PUT if rp.name.is_some() => {
                    let body = read_body(req.into_body()).await?;
                    ctx.update(ns, &name, sub, body, body_format(ctype.as_deref()), out)
                        .await
                }
                Method::PATCH if rp.name.is_some() => {
                    let body = read_body(req.into_body()).await?;
                    ctx.patch(ns, &name, sub, body, body_format(ctype.as_deref()), out)
                        .await
                }
                Method::DELETE if rp.name.is_some() && sub.is_none() => {
                    let body = read_body(req.into_body()).await?;
                    ctx.delete(ns, &name, body, ctype.as_deref(), out).await
                }
                Method::DELETE if rp.name.is_none() => {
                    let body = read_body(req.into_body()).await?;
                    ctx.delete_collection(ns, body, ctype.as_deref(), out).await
                }
                _ => Err(ApiError::method_not_supported(
                    &def.api.group_resource(),
                    &verb_name(&method),
                )),
            }
        }
    }
}

fn verb_name(m: &Method) -> String {
    match *m {
        Method::POST => "create".into(),
        Method::PUT => "update".into(),
        Method::PATCH => "patch".into(),
        Method::DELETE => "delete".into(),
        _ => m.as_str().to_ascii_lowercase(),
    }
}

struct Ctx<'a> {
    app: Arc<App>,
    def: Arc<ResourceDef>,
    query: &'a Query,
    pretty: bool,
    /// Warning headers for the response (e.g. unknown fields under fieldValidation=Warn).
    warnings: std::sync::Mutex<Vec<String>>,
    /// The request's User-Agent (the field manager when `fieldManager` is not given).
    user_agent: String,
    /// Who the request is from (`None` when the server authenticates no one).
    user: Option<Arc<crest_auth::cache::Authenticated>>,
}

/// The parts of an apply request ([`Ctx::apply_input`]).
struct ApplyInput {
    opts: WriteOptions,
    manager: String,
    force: bool,
    config: Value,
    dups: Duplicates,
}

/// Upstream's `gvkWithDefaults` for a built-in kind's body: an empty kind is the endpoint's; an
/// apiVersion without a version takes the endpoint's (when its group is empty or the same).
/// Sets the resource's kind and apiVersion, whatever the object said (a strategic merge patch's
/// result, converted through the Go type as upstream converts it).
fn default_type_meta_always(obj: &mut Value, a: &crest_api::ApiResource) {
    if let Some(o) = obj.as_object_mut() {
        o.insert("kind".into(), a.kind.clone().into());
        o.insert("apiVersion".into(), a.api_version().into());
    }
}

fn default_type_meta(obj: &mut Value, a: &crest_api::ApiResource) {
    let Some(o) = obj.as_object_mut() else {
        return;
    };
    // Absent, null and "" are the same empty string to the decoder; other types are left for
    // the type check to refuse.
    let text = |v: Option<&Value>| match v {
        None | Some(Value::Null) => Some(String::new()),
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => None,
    };
    if text(o.get("kind")).is_some_and(|k| k.is_empty()) {
        o.insert("kind".into(), a.kind.clone().into());
    }
    if let Some(api_version) = text(o.get("apiVersion")) {
        let (group, version) = api_version.split_once('/').unwrap_or(("", &api_version));
        if version.is_empty() && (group.is_empty() || group == a.group) {
            o.insert("apiVersion".into(), a.api_version().into());
        }
    }
}

fn status_code(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::OK)
}

impl Ctx<'_> {
    fn render(&self, code: u16, payload: Payload, out: Output) -> Result<Response<Body>, ApiError> {
        let (payload, out) = self.transform(payload, out)?;
        let mut resp = render(status_code(code), payload, out, self.pretty);
        let warnings =
            std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|p| p.into_inner()));
        let mut seen = std::collections::HashSet::new();
        // Upstream's warning recorder drops a text it already sent.
        for w in warnings.iter().filter(|w| seen.insert(w.as_str())) {
            if let Some(v) = warning_header(w) {
                resp.headers_mut().append(http::header::WARNING, v);
            }
        }
        Ok(resp)
    }

    /// A written object as the Table or PartialObjectMetadata asked for (reads convert their
    /// own); a Status stays as it is.
    fn transform(&self, payload: Payload, out: Output) -> Result<(Payload, Output), ApiError> {
        let (Output::Table { v1beta1 } | Output::Metadata { v1beta1, .. }) = out else {
            return Ok((payload, out));
        };
        let v = match payload {
            Payload::Value(v) => v,
            Payload::Json(b) => {
                serde_json::from_slice(&b).map_err(|e| ApiError::internal(e.to_string()))?
            }
            p @ Payload::Protobuf(_) => return Ok((p, out)),
        };
        if v.get("kind").and_then(Value::as_str) == Some("Status") {
            return Ok((Payload::Value(v), out.after_transform()));
        }
        let converted = match out {
            Output::Table { .. } => {
                let include = IncludeObject::parse(self.query.get("includeObject"))?;
                // A deletecollection answers with the list: a row per item, its ListMeta.
                let (rows, list_meta) = match v.get("items").and_then(Value::as_array) {
                    Some(items) => (
                        items
                            .iter()
                            .map(|i| table::row(&self.def.table, i, include, v1beta1))
                            .collect(),
                        v.get("metadata").cloned().unwrap_or_else(|| json!({})),
                    ),
                    None => (
                        vec![table::row(&self.def.table, &v, include, v1beta1)],
                        json!({"resourceVersion": meta::resource_version(&v)}),
                    ),
                };
                table::table(&self.def.table, rows, list_meta, v1beta1)
            }
            _ => table::partial_object_metadata(&v, v1beta1),
        };
        Ok((Payload::Value(converted), out.after_transform()))
    }

    /// The schema-coercing decode of a custom resource written in this version (prunes and
    /// defaults `obj`), or the typed decode of a built-in kind (drops the fields its type does
    /// not have); then applies `fieldValidation` to the unknown fields dropped and to the
    /// duplicate fields of the body (`dups`, reported first, as upstream's decoder does; for
    /// every resource). A create or update words a strict failure as decoding the body does; a
    /// patch bare. `json_body`: the JSON document `obj` was parsed from, when its order is the
    /// one upstream's decoder meets fields in (a create or update body in JSON).
    fn coerce(
        &self,
        obj: &mut Value,
        from_patch: bool,
        dups: &Duplicates,
        json_body: Option<&[u8]>,
    ) -> Result<(), ApiError> {
        let unknown = match (&self.def.cr_schema, self.def.typed) {
            (Some(schema), _) => schema.decode_request(obj)?,
            // A built-in kind: decoded against its published type.
            (None, Some(definition)) => {
                match crest_openapi::typed::decode_body(definition, obj, json_body) {
                    Ok(unknown) => UnknownFields(unknown),
                    Err(e) => return Err(self.type_error(obj, &e, from_patch)),
                }
            }
            (None, None) => UnknownFields(Vec::new()),
        };
        let a = &self.def.api;
        self.field_validation(unknown.messages(), dups, from_patch, &a.kind, &a.version)
    }

    /// A built-in kind's body that does not decode into its Go type (a wrong JSON type): a
    /// create or update answers 400 as decoding the body does (whatever fieldValidation says:
    /// the decode error comes before strict errors); a patch 422 as upstream's patcher, which
    /// decodes the patched object (`patch: Invalid value: "<patched object>": <error>`).
    fn type_error(&self, obj: &Value, e: &str, from_patch: bool) -> ApiError {
        let a = &self.def.api;
        if from_patch {
            let patched = crest_codec::json::to_vec_patched(obj, &a.api_version(), &a.kind);
            let errs = [crest_api::FieldError::invalid(
                &crest_api::FieldPath::new("patch"),
                String::from_utf8_lossy(&patched).into_owned(),
                e,
            )];
            return ApiError::invalid(&crest_api::GroupKind::new("", ""), "", &errs);
        }
        ApiError::bad_request(format!(
            "{} in version {:?} cannot be handled as a {}: {e}",
            a.kind, a.version, a.kind
        ))
    }

    /// A strategic merge patch's result is converted into a built-in kind's Go type from its
    /// unstructured form (upstream's `FromUnstructuredWithValidation`), not decoded from JSON:
    /// that conversion's errors and leniency, and a 422 naming the patch as Go prints its map.
    fn convert_patched(&self, doc: &mut Value, patch: &Value) -> Result<(), ApiError> {
        let (None, Some(definition)) = (&self.def.cr_schema, self.def.typed) else {
            return Ok(());
        };
        crest_openapi::typed::from_unstructured(definition, doc).map_err(|e| {
            let errs = [FieldError::invalid(
                &FieldPath::new("patch"),
                crest_gofmt::go_v(patch),
                e,
            )];
            ApiError::invalid(&GroupKind::new("", ""), "", &errs)
        })
    }

    /// A JSON or merge patch may not change the object's kind or apiVersion. A built-in kind's
    /// patched JSON is decoded into the kind's Go type (apiserver's `jsonPatcher`:
    /// `runtime.DecodeInto` through the versioning codec): a foreign kind is decoded as its own
    /// type, which does not convert into the resource's internal type, or is not registered at
    /// all; either error is a 422 naming the patched JSON. A custom resource's update validation
    /// (apiextensions-apiserver's `customResourceValidator.ValidateTypeMeta`) refuses both, the
    /// error's kind being the patched object's own (the unstructured typer reads it from there).
    fn check_patched_type(&self, doc: &Value, name: &str) -> Result<(), ApiError> {
        let a = &self.def.api;
        let want_av = a.api_version();
        let kind = doc.get("kind").and_then(Value::as_str).unwrap_or("");
        let av = doc.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        if self.def.crd_name.is_some() {
            let mut errs = vec![];
            if kind != a.kind {
                errs.push(FieldError::invalid(
                    &FieldPath::new("kind"),
                    kind,
                    format!("must be {}", a.kind),
                ));
            }
            if av != want_av {
                errs.push(FieldError::invalid(
                    &FieldPath::new("apiVersion"),
                    av,
                    format!("must be {want_av}"),
                ));
            }
            if errs.is_empty() {
                return Ok(());
            }
            let group = av.rsplit_once('/').map_or("", |(g, _)| g);
            return Err(ApiError::invalid(&GroupKind::new(group, kind), name, &errs));
        }
        // Left out, the decoder takes them from the resource's type (`gvkWithDefaults`).
        let kind = if kind.is_empty() {
            a.kind.as_str()
        } else {
            kind
        };
        let av = if av.is_empty() { want_av.as_str() } else { av };
        if kind == a.kind && av == want_av {
            return Ok(());
        }
        let (group, version) = av.rsplit_once('/').unwrap_or(("", av));
        let crd_api = a.group == "apiextensions.k8s.io";
        let registered =
            crest_codec::json::is_typed(av, kind) && (!crd_api || group == "apiextensions.k8s.io");
        let detail = if registered {
            // The internal (hub) package of the resource: events.k8s.io's Event is core's.
            let internal = match a.group.as_str() {
                "" | "events.k8s.io" => "core",
                g => g.split('.').next().unwrap_or(g),
            };
            format!(
                "converting ({version}.{kind}) to ({internal}.{}): unknown conversion",
                a.kind
            )
        } else {
            let scheme = if crd_api {
                "k8s.io/apiextensions-apiserver/pkg/apiserver/apiserver.go:53"
            } else {
                "pkg/api/legacyscheme/scheme.go:30"
            };
            format!("no kind {kind:?} is registered for version {av:?} in scheme {scheme:?}")
        };
        let patched = crest_codec::json::to_vec_patched(doc, &want_av, &a.kind);
        let errs = [FieldError::invalid(
            &FieldPath::new("patch"),
            String::from_utf8_lossy(&patched).into_owned(),
            detail,
        )];
        Err(ApiError::invalid(&GroupKind::new("", ""), "", &errs))
    }

    /// Applies `fieldValidation` to what a decode found: the body's duplicate fields (first, as
    /// upstream's decoder reports them) and the unknown fields it dropped. Ignore: nothing;
    /// Warn: one Warning header each; Strict: a 400 worded as decoding the body does for a
    /// create or update (`<Kind> in version "<v>" cannot be handled as a <Kind>: ...`), bare
    /// for a patch.
    fn field_validation(
        &self,
        unknown: Vec<String>,
        dups: &Duplicates,
        from_patch: bool,
        kind: &str,
        version: &str,
    ) -> Result<(), ApiError> {
        if unknown.is_empty() && dups.is_empty() {
            return Ok(());
        }
        match FieldValidation::parse(self.query.field_validation()?) {
            FieldValidation::Ignore => Ok(()),
            FieldValidation::Warn => {
                let mut w = self.warnings.lock().unwrap_or_else(|p| p.into_inner());
                w.clear();
                w.extend(dups.warnings.iter().cloned());
                w.extend(unknown);
                Ok(())
            }
            FieldValidation::Strict => {
                let mut all = dups.strict.clone();
                all.extend(unknown);
                let text = format!("strict decoding error: {}", all.join(", "));
                if from_patch {
                    return Err(ApiError::bad_request(text));
                }
                Err(ApiError::bad_request(format!(
                    "{kind} in version {version:?} cannot be handled as a {kind}: {text}"
                )))
            }
        }
    }

    /// The duplicate fields of a request body (or patch), unless `fieldValidation=Ignore`
    /// makes them moot.
    fn duplicates(&self, body: &[u8], fmt: BodyFormat) -> Result<Duplicates, ApiError> {
        self.duplicates_if(body, fmt, true)
    }

    /// [`Self::duplicates`], skipped when the decode already saw none (`may_repeat` false).
    fn duplicates_if(
        &self,
        body: &[u8],
        fmt: BodyFormat,
        may_repeat: bool,
    ) -> Result<Duplicates, ApiError> {
        let validation = FieldValidation::parse(self.query.field_validation()?);
        if validation == FieldValidation::Ignore || !may_repeat {
            return Ok(Duplicates::default());
        }
        Ok(match fmt {
            BodyFormat::Yaml => Duplicates::yaml(body),
            BodyFormat::JsonPatch => Duplicates::json_patch(body),
            // Protobuf has no duplicate fields to report (upstream's decoder is not strict).
            BodyFormat::Protobuf => Duplicates::default(),
            _ => Duplicates::json(body),
        })
    }

    fn decode(&self, body: &[u8], fmt: BodyFormat) -> Result<Value, ApiError> {
        self.decode_noting_duplicates(body, fmt).map(|(v, _)| v)
    }

    /// The body decoded, and whether it may repeat a field: false when a JSON body's decode saw
    /// no object repeat a key, so [`Self::duplicates`] need not read it again.
    fn decode_noting_duplicates(
        &self,
        body: &[u8],
        fmt: BodyFormat,
    ) -> Result<(Value, bool), ApiError> {
        let v = match fmt {
            BodyFormat::Json => return crest_codec::negotiate::decode_json_object(body),
            BodyFormat::Yaml => decode_object(body, true),
            // Built-in kinds also take protobuf; custom resources do not (415, as upstream).
            BodyFormat::Protobuf => {
                let a = &self.def.api;
                crest_codec::protobuf::decode_object(body, &a.group, &a.version, &a.kind)
            }
            _ if self.def.crd_name.is_none() => Err(ApiError::unsupported_media_type(
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
            )),
            _ => Err(crest_codec::protobuf::unsupported_for_kind()),
        }?;
        Ok((v, true))
    }

    /// The decoder reads apiVersion and kind first (`SimpleMetaFactory.Interpret`: encoding/json
    /// into an anonymous struct of two strings), so one of another JSON type fails the decode
    /// with that message, before anything else is looked at.
    fn check_type_meta_types(
        &self,
        obj: &Value,
        body: &[u8],
        fmt: BodyFormat,
    ) -> Result<(), ApiError> {
        if fmt == BodyFormat::Protobuf {
            return Ok(());
        }
        for field in ["apiVersion", "kind"] {
            let what = match obj.get(field) {
                Some(Value::Bool(_)) => "bool",
                Some(Value::Number(_)) => "number",
                Some(Value::Array(_)) => "array",
                Some(Value::Object(_)) => "object",
                _ => continue,
            };
            return Err(ApiError::bad_request(format!(
                "the object provided is unrecognized (must be of type {}): couldn't get version/kind; json parse error: json: cannot unmarshal {what} into Go struct field .{field} of type string ({})",
                self.def.api.kind,
                crest_codec::protobuf::summarize(body)
            )));
        }
        Ok(())
    }

    /// The body's apiVersion and kind must name this resource's kind in this version. A
    /// built-in kind's body may leave them out: the decoder takes them from the endpoint
    /// (upstream's `gvkWithDefaults` with the request's kind), as typed clients that send no
    /// TypeMeta (the Python client) rely on.
    fn check_type(&self, obj: &mut Value) -> Result<(), ApiError> {
        let a = &self.def.api;
        if self.def.crd_name.is_none() {
            default_type_meta(obj, a);
        }
        let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
        let snippet = || {
            let s = obj.to_string();
            s.chars().take(500).collect::<String>()
        };
        if kind.is_empty() {
            return Err(ApiError::bad_request(format!(
                "Object 'Kind' is missing in '{}'",
                snippet()
            )));
        }
        if api_version.is_empty() {
            return Err(ApiError::bad_request(format!(
                "Object 'apiVersion' is missing in '{}'",
                snippet()
            )));
        }
        if api_version != a.api_version() {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({api_version}) does not match the expected API version ({})",
                a.api_version()
            )));
        }
        if kind != a.kind {
            return Err(ApiError::bad_request(format!(
                "the kind in the data ({kind}) does not match the expected kind ({})",
                a.kind
            )));
        }
        Ok(())
    }

    /// The options of a write (`kind`: CreateOptions, UpdateOptions, PatchOptions), validated
    /// as upstream's `Validate*Options` (for a patch, `apply` says whether it is one), with the
    /// field manager the write is recorded for.
    fn write_options(&self, kind: &str) -> Result<WriteOptions, ApiError> {
        self.write_options_for(kind, None)
    }

    fn write_options_for(&self, kind: &str, apply: Option<bool>) -> Result<WriteOptions, ApiError> {
        let mut opts = WriteOptions::new(self.query.dry_run(kind)?);
        opts.user = self.user.clone();
        let field_manager = self.query.get("fieldManager");
        let errs = match apply {
            Some(apply) => crest_managedfields::validate_patch_options(
                apply,
                field_manager.unwrap_or(""),
                self.query.get("force").is_some(),
            ),
            None => crest_managedfields::validate_field_manager(
                field_manager.unwrap_or(""),
                &FieldPath::new("fieldManager"),
            ),
        };
        if !errs.is_empty() {
            return Err(ApiError::invalid(
                &GroupKind::new("meta.k8s.io", kind),
                "",
                &errs,
            ));
        }
        self.query.field_validation()?;
        opts.manager = Some(crest_managedfields::manager_or_user_agent(
            field_manager,
            &self.user_agent,
        ));
        Ok(opts)
    }

    /// Adds the warnings a registry write produced to the response's.
    fn add_warnings(&self, opts: &WriteOptions) {
        let extra = opts.take_warnings();
        if !extra.is_empty() {
            self.warnings
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend(extra);
        }
    }

    async fn get(
        &self,
        ns: Option<&str>,
        name: &str,
        out: Output,
    ) -> Result<Response<Body>, ApiError> {
        let rv = self.query.get("resourceVersion").unwrap_or("");
        let obj = self.app.registry.get_at(&self.def, ns, name, rv).await?;
        let bytes = self.app.registry.serve_async(&self.def, &obj).await?;
        match out {
            Output::Table { v1beta1 } => {
                let include = IncludeObject::parse(self.query.get("includeObject"))?;
                let mut list_meta = serde_json::Map::new();
                list_meta.insert(
                    "resourceVersion".into(),
                    obj.mod_revision.to_string().into(),
                );
                let t = table::list_table(
                    &self.def.table,
                    std::slice::from_ref(&bytes),
                    &list_meta,
                    include,
                    v1beta1,
                )?;
                self.render(200, Payload::Json(Bytes::from(t)), Output::Json)
            }
            Output::Metadata { v1beta1, .. } => {
                let v: Value = serde_json::from_slice(&bytes)
                    .map_err(|e| ApiError::internal(e.to_string()))?;
                self.render(
                    200,
                    Payload::Value(table::partial_object_metadata(&v, v1beta1)),
                    out.after_transform(),
                )
            }
            _ => self.render(200, Payload::Json(bytes), out),
        }
    }

    async fn list(&self, ns: Option<&str>, out: Output) -> Result<Response<Body>, ApiError> {
        let filter = self.query.list_filter(&self.def)?;
        let page = self
            .app
            .registry
            .list_at(&self.def, ns, &self.query.list_options(), &filter)
            .await?;
        let rv = page.revision.to_string();
        let items = page.items;
        // ListMeta: resourceVersion, then continue and remainingItemCount when there is more.
        let mut list_meta = serde_json::Map::new();
        if let Some(c) = &page.continue_token {
            list_meta.insert("continue".into(), c.clone().into());
        }
        if let Some(n) = page.remaining {
            list_meta.insert("remainingItemCount".into(), n.into());
        }
        list_meta.insert("resourceVersion".into(), rv.clone().into());
        match out {
            Output::Table { v1beta1 } => {
                let include = IncludeObject::parse(self.query.get("includeObject"))?;
                let t = table::list_table(&self.def.table, &items, &list_meta, include, v1beta1)?;
                self.render(200, Payload::Json(Bytes::from(t)), Output::Json)
            }
            Output::Metadata { v1beta1, .. } => {
                let mut metas = Vec::with_capacity(items.len());
                for b in &items {
                    let v: Value =
                        serde_json::from_slice(b).map_err(|e| ApiError::internal(e.to_string()))?;
                    metas.push(table::partial_object_metadata(&v, v1beta1));
                }
                let list = json!({
                    "kind": "PartialObjectMetadataList",
                    "apiVersion": if v1beta1 { "meta.k8s.io/v1beta1" } else { "meta.k8s.io/v1" },
                    "metadata": list_meta,
                    "items": metas,
                });
                self.render(200, Payload::Value(list), out.after_transform())
            }
            Output::Protobuf => {
                let api_version = self.def.api.api_version();
                let list_meta = Value::Object(list_meta);
                match crest_codec::protobuf::encode_list(
                    &api_version,
                    &self.def.api.list_kind,
                    &list_meta,
                    &items,
                ) {
                    Some(b) => self.render(200, Payload::Protobuf(Bytes::from(b)), out),
                    None => Err(ApiError::internal(format!(
                        "{} cannot be encoded as protobuf",
                        self.def.api.list_kind
                    ))),
                }
            }
            _ => {
                // Assembled from the cached bytes. A built-in kind's list is its Go type
                // (kind, apiVersion, ListMeta, items); a custom resource's is upstream's
                // UnstructuredList, a map encoded with its keys sorted (ListMeta's too).
                let total: usize = items.iter().map(Bytes::len).sum::<usize>() + items.len() + 256;
                let mut buf = BytesMut::with_capacity(total);
                let items_json = |buf: &mut BytesMut| {
                    buf.put_slice(b"\"items\":[");
                    for (i, b) in items.iter().enumerate() {
                        if i > 0 {
                            buf.put_u8(b',');
                        }
                        buf.put_slice(b);
                    }
                    buf.put_u8(b']');
                };
                let api_version = json_str(&self.def.api.api_version());
                let kind = json_str(&self.def.api.list_kind);
                if self.def.crd_name.is_some() {
                    buf.put_slice(b"{\"apiVersion\":");
                    buf.put_slice(api_version.as_bytes());
                    buf.put_u8(b',');
                    items_json(&mut buf);
                    buf.put_slice(b",\"kind\":");
                    buf.put_slice(kind.as_bytes());
                    buf.put_slice(b",\"metadata\":");
                    buf.put_slice(&serde_json::to_vec(&list_meta).unwrap_or_default());
                } else {
                    buf.put_slice(b"{\"kind\":");
                    buf.put_slice(kind.as_bytes());
                    buf.put_slice(b",\"apiVersion\":");
                    buf.put_slice(api_version.as_bytes());
                    buf.put_slice(b",\"metadata\":{");
                    let mut first = true;
                    for k in ["resourceVersion", "continue", "remainingItemCount"] {
                        if let Some(v) = list_meta.get(k) {
                            if !first {
                                buf.put_u8(b',');
                            }
                            first = false;
                            buf.put_slice(json_str(k).as_bytes());
                            buf.put_u8(b':');
                            buf.put_slice(&serde_json::to_vec(v).unwrap_or_default());
                        }
                    }
                    buf.put_slice(b"},");
                    items_json(&mut buf);
                }
                buf.put_slice(b"}");
                self.render(200, Payload::Json(buf.freeze()), out)
            }
        }
    }

    async fn create(
        &self,
        ns: Option<&str>,
        body: Bytes,
        fmt: BodyFormat,
        out: Output,
    ) -> Result<Response<Body>, ApiError> {
        // Options are decoded and validated before the body, as upstream does.
        let opts = self.write_options("CreateOptions")?;
        let (mut obj, may_repeat) = self.decode_noting_duplicates(&body, fmt)?;
        self.check_type_meta_types(&obj, &body, fmt)?;
        self.check_type(&mut obj)?;
        let dups = self.duplicates_if(&body, fmt, may_repeat)?;
        let json_body = (fmt == BodyFormat::Json).then_some(&body[..]);
        self.coerce(&mut obj, false, &dups, json_body)?;
        check_namespace(&self.def, ns, &obj)?;
        let payload = match self.app.registry.create(&self.def, ns, obj, &opts).await? {
            Served::Tree(v) => Payload::Value(v),
            Served::Json(b) => Payload::Json(b),
        };
        self.add_warnings(&opts);
        self.render(201, payload, out)
    }

    async fn update(
        &self,
        ns: Option<&str>,
        name: &str,
        sub: Option<&str>,
        body: Bytes,
        fmt: BodyFormat,
        out: Output,
    ) -> Result<Response<Body>, ApiError> {
        if sub == Some("scale") {
            return self.update_scale(ns, name, body, fmt, out).await;
        }
        let opts = self.write_options("UpdateOptions")?;
        let (mut obj, may_repeat) = self.decode_noting_duplicates(&body, fmt)?;
        self.check_type_meta_types(&obj, &body, fmt)?;
        self.check_type(&mut obj)?;
        let dups = self.duplicates_if(&body, fmt, may_repeat)?;
        let json_body = (fmt == BodyFormat::Json).then_some(&body[..]);
        self.coerce(&mut obj, false, &dups, json_body)?;
        check_identity(&self.def, ns, name, &obj)?;
        let mode = UpdateMode::from_subresource(sub);
        if sub == Some("finalize") || sub.is_none() || sub == Some("status") {
            let written = self
                .app
                .registry
                .update(&self.def, ns, name, obj, mode, &opts)
                .await?;
            self.add_warnings(&opts);
            let (code, payload) = match written {
                Written::Updated(v) => (200, Payload::Value(v)),
                Written::Created(Served::Tree(v)) => (201, Payload::Value(v)),
                Written::Created(Served::Json(b)) => (201, Payload::Json(b)),
            };
            return self.render(code, payload, out);
        }
        Err(ApiError::path_not_found())
    }

    async fn patch(
        &self,
        ns: Option<&str>,
        name: &str,
        sub: Option<&str>,
        body: Bytes,
        fmt: BodyFormat,
        out: Output,
    ) -> Result<Response<Body>, ApiError> {
        if sub == Some("scale") {
            return self.patch_scale(ns, name, body, fmt, out).await;
        }
        if fmt == BodyFormat::ApplyPatch {
            return self.apply(ns, name, sub, &body, out).await;
        }
        let opts = self.write_options_for("PatchOptions", Some(false))?;
        let patch = self.decode_patch(&body, fmt)?;
        let mode = UpdateMode::from_subresource(sub);
        let dups = self.duplicates(&body, fmt)?;
        let patch_body = self.patch_body(fmt, &patch, &body)?;
        let apply = |current: &Value| -> Result<Value, ApiError> {
            let mut doc = apply_patch(&patch_body, current, self.def.typed)?;
            if fmt == BodyFormat::StrategicMergePatch {
                self.convert_patched(&mut doc, &patch)?;
                // Upstream converts the patched object through the kind's Go type, whose
                // TypeMeta the conversion does not read: a patched kind or apiVersion is lost.
                default_type_meta_always(&mut doc, &self.def.api);
            } else {
                self.check_patched_type(&doc, name)?;
            }
            self.coerce(&mut doc, true, &dups, None)?;
            Ok(doc)
        };
        let patched = self
            .app
            .registry
            .patch(&self.def, ns, name, mode, &opts, apply)
            .await;
        let patched = match patched {
            Ok(p) => p,
            Err(e) => return patch_answer(Err(e)),
        };
        self.add_warnings(&opts);
        self.render(200, Payload::Value(patched), out)
    }

    /// The patch as `apply_patch` takes it: a JSON patch's operations are decoded as typed
    /// unless fieldValidation is Ignore (upstream's strict decoding runs for Strict and Warn).
    fn patch_body<'a>(
        &self,
        fmt: BodyFormat,
        value: &'a Value,
        raw: &'a [u8],
    ) -> Result<PatchBody<'a>, ApiError> {
        let typed_ops =
            FieldValidation::parse(self.query.field_validation()?) != FieldValidation::Ignore;
        Ok(PatchBody {
            fmt,
            value,
            raw,
            typed_ops,
            ops: Default::default(),
        })
    }

    /// Server-side apply (`application/apply-patch+yaml`): the body (YAML or JSON) is the
    /// manager's whole intent, merged into the live object by the resource's schema with
    /// ownership recorded in managedFields (crest_managedfields), creating the object when it
    /// does not exist; then the usual pipeline (pruning, defaults, validation, storage).
    async fn apply(
        &self,
        ns: Option<&str>,
        name: &str,
        sub: Option<&str>,
        body: &[u8],
        out: Output,
    ) -> Result<Response<Body>, ApiError> {
        let ApplyInput {
            opts,
            manager,
            force,
            config,
            dups,
        } = self.apply_input(body)?;
        let Some(m) = self.def.managed() else {
            return Err(ApiError::internal(format!(
                "no merge schema for {}",
                self.def.api.group_resource()
            )));
        };
        let subresource = sub.unwrap_or("");
        let fm = crest_managedfields::FieldManager {
            schema: &m.schema,
            api_version: &m.api_version,
            kind: &self.def.api.kind,
            subresource,
            reset_fields: m.reset_fields(subresource),
        };
        let applied = |live: Option<&Value>| -> Result<Value, ApiError> {
            let mut doc = fm
                .apply(live, &config, &manager, force, &meta::now_rfc3339())
                .map_err(|e| e.to_api_error())?;
            self.coerce(&mut doc, true, &dups, None)?;
            Ok(doc)
        };
        // The merge recorded this write in managedFields: the registry records nothing more.
        let mode = UpdateMode::from_subresource(sub);
        let patched = self
            .app
            .registry
            .patch(&self.def, ns, name, mode, &opts, |current| {
                applied(Some(current))
            })
            .await;
        let payload = match patched {
            Ok(v) => (200, Payload::Value(v)),
            // Apply creates what does not exist (not through a subresource).
            Err(e) if e.code == 404 && sub.is_none() => {
                // As upstream's applyPatcher: a uid names an object that must exist.
                let uid = config
                    .pointer("/metadata/uid")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if !uid.is_empty() {
                    return Err(ApiError::new(
                        409,
                        crest_api::Reason::Conflict,
                        format!("uid mismatch: the provided object specified uid {uid}, and no existing object was found"),
                    ));
                }
                let obj = applied(None)?;
                check_identity(&self.def, ns, name, &obj)?;
                match self.app.registry.create(&self.def, ns, obj, &opts).await? {
                    Served::Tree(v) => (201, Payload::Value(v)),
                    Served::Json(b) => (201, Payload::Json(b)),
                }
            }
            Err(e) => return Err(e),
        };
        self.add_warnings(&opts);
        self.render(payload.0, payload.1, out)
    }

    /// What every apply reads from its request: the options (validated for an apply; the
    /// merge records the write itself, so the registry is given no manager), the manager,
    /// `force`, the configuration (YAML or JSON, an object) and its duplicate fields.
    fn apply_input(&self, body: &[u8]) -> Result<ApplyInput, ApiError> {
        let mut opts = self.write_options_for("PatchOptions", Some(true))?;
        let force = self.query.bool("force")?;
        let manager = opts.manager.take().unwrap_or_default();
        // Upstream decodes it with sigs.k8s.io/yaml's Unmarshal, whose converter errors read
        // `error converting YAML to JSON: ...`; the decode refuses deep nesting and excessive
        // aliasing before expanding anything (crest_codec::yaml).
        let mut config: Value = crest_codec::yaml::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!(
                "error decoding YAML: error converting YAML to JSON: {e}"
            ))
        })?;
        // Upstream unmarshals into a map: an empty body or `null` is an empty configuration
        // (then refused by the version check), anything else but an object fails here.
        match &config {
            Value::Object(_) => {}
            Value::Null => config = Value::Object(Default::default()),
            other => {
                return Err(ApiError::bad_request(format!(
                    "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                    crest_gofmt::json_kind(other)
                )))
            }
        }
        let dups = self.duplicates(body, BodyFormat::Yaml)?;
        Ok(ApplyInput {
            opts,
            manager,
            force,
            config,
            dups,
        })
    }

    /// A patch body of a type this resource accepts.
    fn decode_patch(&self, body: &[u8], fmt: BodyFormat) -> Result<Value, ApiError> {
        let builtin = self.def.crd_name.is_none();
        match fmt {
            BodyFormat::MergePatch | BodyFormat::JsonPatch => serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}"))),
            // Built-in kinds accept strategic merge patches; custom resources (and their
            // subresources) do not.
            BodyFormat::StrategicMergePatch if builtin => serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}"))),
            _ => {
                let accepted = if builtin {
                    "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml"
                } else {
                    "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
                };
                Err(ApiError::unsupported_media_type(format!(
                    "the body of the request was in an unknown format - accepted media types include: {accepted}"
                )))
            }
        }
    }

    fn scale_paths(&self, name: &str) -> Result<ScalePaths, ApiError> {
        self.def
            .strategy
            .scale()
            .cloned()
            .ok_or_else(|| ApiError::not_found(&self.def.api.group_resource(), name))
    }

    /// `fieldValidation` over the fields a Scale has no place for, and the body's duplicates.
    fn scale_field_validation(
        &self,
        obj: &Value,
        dups: &Duplicates,
        from_patch: bool,
    ) -> Result<(), ApiError> {
        let unknown = UnknownFields(scale::unknown_fields(obj)).messages();
        self.field_validation(unknown, dups, from_patch, "Scale", "v1")
    }

    /// GET .../NAME/scale: the Scale of the object (500 when spec replicas are absent).
    async fn get_scale(
        &self,
        ns: Option<&str>,
        name: &str,
        out: Output,
    ) -> Result<Response<Body>, ApiError> {
        let paths = self.scale_paths(name)?;
        let rv = self.query.get("resourceVersion").unwrap_or("");
        let obj = self.app.registry.get_at(&self.def, ns, name, rv).await?;
        let bytes = self.app.registry.serve_async(&self.def, &obj).await?;
        let cr: Value =
            serde_json::from_slice(&bytes).map_err(|e| ApiError::internal(e.to_string()))?;
        let (scale, found) = paths.scale_of(&cr).map_err(scale::read_error)?;
        if !found {
            return Err(scale::spec_replicas_missing(&paths.spec_replicas));
        }
        match out {
            // The custom resource's table convertor prints the Scale, as upstream's scale scope
            // keeps it.
            Output::Table { v1beta1 } => {
                let include = IncludeObject::parse(self.query.get("includeObject"))?;
                let row = table::row(&self.def.table, &scale, include, v1beta1);
                let t = table::table(
                    &self.def.table,
                    vec![row],
                    json!({"resourceVersion": meta::resource_version(&scale)}),
                    v1beta1,
                );
                self.render(200, Payload::Value(t), Output::Json)
            }
            Output::Metadata { v1beta1, .. } => self.render(
                200,
                Payload::Value(table::partial_object_metadata(&scale, v1beta1)),
                out.after_transform(),
            ),
            _ => self.render(200, Payload::Value(scale), out),
        }
    }

    /// The Scale a write answers with: that of the updated object.
    fn scale_response(
        &self,
        paths: &ScalePaths,
        updated: &Value,
        out: Output,
    ) -> Result<Response<Body>, ApiError> {
        let (scale, _) = paths.scale_of(updated).map_err(ApiError::bad_request)?;
        self.render(200, Payload::Value(scale), out)
    }

    /// PUT .../NAME/scale: spec replicas (and the Scale's resourceVersion as precondition) into
    /// the object, then the object's update as any other (strategy, validation, conflicts).
    async fn update_scale(
        &self,
        ns: Option<&str>,
        name: &str,
        body: Bytes,
        fmt: BodyFormat,
        out: Output,
    ) -> Result<Response<Body>, ApiError> {
        let paths = self.scale_paths(name)?;
        let mut opts = self.write_options_for("UpdateOptions", None)?;
        // Recorded on the object as the change of its replicas field, under subresource
        // "scale" (as upstream's scale field manager converts the Scale's fields).
        opts.managed_subresource = Some("scale");
        let obj = match fmt {
            // A Scale is an autoscaling/v1 message, whatever the object's resource.
            BodyFormat::Protobuf => {
                crest_codec::protobuf::decode_object(&body, "autoscaling", "v1", "Scale")?
            }
            _ => self.decode(&body, fmt)?,
        };
        check_scale_type(&obj)?;
        let dups = self.duplicates(&body, fmt)?;
        self.scale_field_validation(&obj, &dups, false)?;
        let requested = scale::decode(&obj).map_err(|e| {
            ApiError::bad_request(format!(
                "Scale in version \"v1\" cannot be handled as a Scale: {e}"
            ))
        })?;
        if requested.name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({}) does not match the name on the URL ({name})",
                requested.name
            )));
        }
        if self.def.api.namespaced
            && !requested.namespace.is_empty()
            && Some(requested.namespace.as_str()) != ns
        {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        self.write_scale(ns, name, &paths, &opts, out, |_| Ok(requested.clone()))
            .await
    }

    /// PATCH .../NAME/scale: the patch applies to the object's Scale; the result is written as a
    /// PUT of that Scale would be.
    async fn patch_scale(
        &self,
        ns: Option<&str>,
        name: &str,
        body: Bytes,
        fmt: BodyFormat,
        out: Output,
    ) -> Result<Response<Body>, ApiError> {
        let paths = self.scale_paths(name)?;
        if fmt == BodyFormat::ApplyPatch {
            return self.apply_scale(ns, name, &paths, &body, out).await;
        }
        let mut opts = self.write_options_for("PatchOptions", Some(false))?;
        // Recorded on the object as the change of its replicas field, under subresource
        // "scale" (as upstream's scale field manager converts the Scale's fields).
        opts.managed_subresource = Some("scale");
        let patch = self.decode_patch(&body, fmt)?;
        let dups = self.duplicates(&body, fmt)?;
        let patch_body = self.patch_body(fmt, &patch, &body)?;
        let written = self
            .write_scale(ns, name, &paths, &opts, out, |cur| {
                let current = paths.scale_to_patch(cur)?;
                let patched = apply_patch(&patch_body, &current, None)?;
                self.scale_field_validation(&patched, &dups, true)?;
                scale::decode(&patched).map_err(|e| {
                    let errs = [FieldError::invalid(
                        &FieldPath::new("patch"),
                        patched.to_string(),
                        e,
                    )];
                    let mut err = ApiError::invalid(&GroupKind::new("", ""), "", &errs);
                    err.message = format!(" \"\" is invalid: {}", errs[0]);
                    err
                })
            })
            .await;
        patch_answer(written)
    }

    /// Server-side apply through /scale, as upstream's ScaleHandler: the Scale shows the
    /// object's entries that own its replicas path (as owning `.spec.replicas`), the apply
    /// merges into that Scale, and the Scale's entries go back into the object's with the path
    /// translated back; the replicas are then written as any /scale write.
    async fn apply_scale(
        &self,
        ns: Option<&str>,
        name: &str,
        paths: &ScalePaths,
        body: &[u8],
        out: Output,
    ) -> Result<Response<Body>, ApiError> {
        use crest_managedfields::{scale as mfscale, FieldManager, ManagedFields, Schema};
        let ApplyInput {
            opts,
            manager,
            force,
            config,
            dups,
        } = self.apply_input(body)?;
        // autoscaling/v1 Scale's merge type, compiled once.
        static SCALE: std::sync::OnceLock<Result<Schema, String>> = std::sync::OnceLock::new();
        let scale_schema = SCALE
            .get_or_init(|| {
                Schema::from_definition(
                    "io.k8s.api.autoscaling.v1.Scale",
                    crest_openapi::builtin_definitions(),
                )
            })
            .as_ref()
            .map_err(|e| ApiError::internal(e.clone()))?;
        let api_version = self.def.api.api_version();
        let replicas = crest_managedfields::Path::fields(
            &paths
                .spec_replicas
                .trim_start_matches('.')
                .split('.')
                .collect::<Vec<_>>(),
        );
        let mappings: mfscale::ResourcePathMappings = [(api_version.clone(), Some(replicas))]
            .into_iter()
            .collect();
        let fm = FieldManager {
            schema: scale_schema,
            api_version: "autoscaling/v1",
            kind: "Scale",
            subresource: "scale",
            reset_fields: None,
        };
        self.write_scale_with(ns, name, paths, &opts, out, |cur| {
            let parent =
                ManagedFields::decode(cur.pointer("/metadata/managedFields")).unwrap_or_default();
            let (mut live, _) = paths.scale_of(cur).map_err(ApiError::bad_request)?;
            mfscale::to_subresource(&parent, &mappings).encode_into(&mut live);
            let applied = fm
                .apply(Some(&live), &config, &manager, force, &meta::now_rfc3339())
                .map_err(|e| e.to_api_error())?;
            self.scale_field_validation(&applied, &dups, true)?;
            let requested = scale::decode(&applied).map_err(ApiError::bad_request)?;
            let scale_mf = ManagedFields::decode(applied.pointer("/metadata/managedFields"))
                .unwrap_or_default();
            let mut cr = cur.clone();
            paths.apply(&requested, &mut cr)?;
            mfscale::to_parent(&parent, &scale_mf, &api_version, &mappings).encode_into(&mut cr);
            Ok(cr)
        })
        .await
    }

    /// Writes the Scale `requested` computes from the current object into that object, as an
    /// update of the object (strategy, validation, conflicts), and answers the resulting Scale.
    async fn write_scale(
        &self,
        ns: Option<&str>,
        name: &str,
        paths: &ScalePaths,
        opts: &WriteOptions,
        out: Output,
        requested: impl Fn(&Value) -> Result<scale::RequestedScale, ApiError>,
    ) -> Result<Response<Body>, ApiError> {
        self.write_scale_with(ns, name, paths, opts, out, |cur| {
            let requested = requested(cur)?;
            let mut cr = cur.clone();
            paths.apply(&requested, &mut cr)?;
            Ok(cr)
        })
        .await
    }

    /// Writes the object `write` makes of the current one, as an update of the object, and
    /// answers the resulting Scale.
    async fn write_scale_with(
        &self,
        ns: Option<&str>,
        name: &str,
        paths: &ScalePaths,
        opts: &WriteOptions,
        out: Output,
        write: impl Fn(&Value) -> Result<Value, ApiError>,
    ) -> Result<Response<Body>, ApiError> {
        let updated = self
            .app
            .registry
            .patch(&self.def, ns, name, UpdateMode::Main, opts, write)
            .await?;
        self.add_warnings(opts);
        self.scale_response(paths, &updated, out)
    }

    async fn delete(
        &self,
        ns: Option<&str>,
        name: &str,
        body: Bytes,
        content_type: Option<&str>,
        out: Output,
    ) -> Result<Response<Body>, ApiError> {
        let options = DeleteOptions::parse(&body, content_type, self.query)?;
        let mut opts = WriteOptions::new(options.is_dry_run());
        opts.cascade = options.cascade();
        let d = self
            .app
            .registry
            .delete(&self.def, ns, name, &options.preconditions, &opts)
            .await?;
        // 202 only when deletion is pending and cascading was asked for the deprecated way.
        let code = if !d.gone && options.orphan_dependents == Some(false) {
            202
        } else {
            200
        };
        if d.gone && !self.def.strategy.returns_deleted_object() {
            let status = crest_api::success_status(
                name,
                &self.def.api.group_resource(),
                meta::uid(&d.object),
            );
            return self.render(code, Payload::Value(status), out);
        }
        self.render(code, Payload::Value(d.object), out)
    }

    async fn delete_collection(
        &self,
        ns: Option<&str>,
        body: Bytes,
        content_type: Option<&str>,
        out: Output,
    ) -> Result<Response<Body>, ApiError> {
        if !self.def.api.verbs.iter().any(|v| v == "deletecollection") {
            return Err(ApiError::method_not_supported(
                &self.def.api.group_resource(),
                "deletecollection",
            ));
        }
        let filter = self.query.list_filter(&self.def)?;
        let options = DeleteOptions::parse(&body, content_type, self.query)?;
        let mut opts = WriteOptions::new(options.is_dry_run());
        opts.cascade = options.cascade();
        let (items, revision) = self
            .app
            .registry
            .delete_collection(&self.def, ns, &options.preconditions, &opts, |v| {
                filter.matches(v)
            })
            .await?;
        let list = json!({
            "apiVersion": self.def.api.api_version(),
            "kind": self.def.api.list_kind,
            "metadata": {"resourceVersion": revision.to_string()},
            "items": items,
        });
        self.render(200, Payload::Value(list), out)
    }
}

/// A Scale body names `autoscaling/v1 Scale` or leaves apiVersion and kind out (the decoder
/// defaults them).
fn check_scale_type(obj: &Value) -> Result<(), ApiError> {
    let field = |f: &str| obj.get(f).and_then(Value::as_str).unwrap_or("");
    let (api_version, kind) = (field("apiVersion"), field("kind"));
    if !api_version.is_empty() && api_version != "autoscaling/v1" {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version (autoscaling/v1)"
        )));
    }
    if !kind.is_empty() && kind != "Scale" {
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({kind}) does not match the expected kind (Scale)"
        )));
    }
    Ok(())
}

/// Upstream's `maxJSONPatchOperations`: a JSON patch of more operations is refused (413).
const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// Upstream's `JSONPatchMaxCopyBytes` default (3 MiB, the request body limit), which it sets as
/// evanphx/json-patch's `AccumulatedCopySizeLimit`: how much the `copy` operations of one JSON
/// patch may add to the object together (their values' marshalled JSON). Without it, each
/// `copy` of the previous result doubles the object: 25 operations in a small body take
/// gigabytes. crest-jsonpatch refuses the copy that would exceed it before making it.
const JSON_PATCH_MAX_COPY_BYTES: u64 = 3 * 1024 * 1024;

/// How upstream answers any JSON patch that does not apply (a failed `test`, a missing path,
/// the copy limit; Crest's nesting limit too): `NewGenericServerResponse(422, ...)`, whose
/// message is generic and whose details carry nothing of the cause.
fn json_patch_failed() -> ApiError {
    let mut e = ApiError::new(
        422,
        crest_api::Reason::Invalid,
        "the server rejected our request due to an error in our request",
    );
    e.details = Some(Default::default());
    e
}

/// What kube-apiserver's panic recovery (`WithPanicRecovery`, `http.Error`) answers when a
/// handler panics, as evanphx/json-patch v4 does on some JSON patches: 500, in plain text.
const HANDLER_PANICKED: &str =
    "This request caused apiserver to panic. Look in the logs for details.";

/// A JSON patch error as upstream answers it.
fn json_patch_error(e: crest_jsonpatch::ApplyError) -> ApiError {
    match e {
        crest_jsonpatch::ApplyError::Panics(what) => {
            tracing::warn!(
                "a JSON patch on which kube-apiserver panics ({what}): answered as it does"
            );
            let mut e = ApiError::new(500, crest_api::Reason::InternalError, HANDLER_PANICKED);
            e.reason = None;
            e
        }
        other => {
            tracing::debug!("JSON patch refused: {other}");
            json_patch_failed()
        }
    }
}

/// The answer of a patch: upstream's plain-text 500 when the JSON patch made it panic, as it
/// does not answer that with a Status.
fn patch_answer(r: Result<Response<Body>, ApiError>) -> Result<Response<Body>, ApiError> {
    match r {
        Err(e) if e.code == 500 && e.reason.is_none() && e.message == HANDLER_PANICKED => {
            let mut resp =
                Response::new(crate::http::render::full(format!("{HANDLER_PANICKED}\n")));
            *resp.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
            let headers = resp.headers_mut();
            headers.insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            headers.insert(
                http::header::X_CONTENT_TYPE_OPTIONS,
                http::HeaderValue::from_static("nosniff"),
            );
            Ok(resp)
        }
        other => other,
    }
}

/// A patch body: its JSON (merge and strategic merge patches use the tree), its bytes (JSON
/// patches keep their values' text, which their `test`s compare) and whether a JSON patch's
/// operations are decoded as typed (fieldValidation Strict or Warn).
struct PatchBody<'a> {
    fmt: BodyFormat,
    value: &'a Value,
    raw: &'a [u8],
    typed_ops: bool,
    /// A JSON patch's operations, decoded once for all of the patch's attempts (after the
    /// first read found the object, as upstream decodes after its Get).
    ops: std::sync::OnceLock<Result<crest_jsonpatch::Patch, ApiError>>,
}

impl PatchBody<'_> {
    /// The JSON patch's operations: upstream's order of errors, the typed decoding (400),
    /// DecodePatch (400), then the count (413).
    fn json_patch(&self) -> Result<&crest_jsonpatch::Patch, ApiError> {
        let decoded = self.ops.get_or_init(|| {
            let p = crest_jsonpatch::Patch::decode(self.raw, self.typed_ops)
                .map_err(|e| ApiError::bad_request(e.0))?;
            if p.len() > MAX_JSON_PATCH_OPERATIONS {
                return Err(ApiError::new(
                    413,
                    crest_api::Reason::RequestEntityTooLarge,
                    format!(
                        "Request entity too large: The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
                        p.len()
                    ),
                ));
            }
            Ok(p)
        });
        decoded.as_ref().map_err(Clone::clone)
    }
}

/// Applies a JSON patch (crest-jsonpatch: evanphx/json-patch v4's semantics, as upstream),
/// merge patch or (built-in kinds) strategic merge patch to `current`; `typed` is the built-in
/// kind's published definition (its fields' patch strategies).
fn apply_patch(body: &PatchBody, current: &Value, typed: Option<&str>) -> Result<Value, ApiError> {
    match body.fmt {
        BodyFormat::JsonPatch => body
            .json_patch()?
            .apply(current, JSON_PATCH_MAX_COPY_BYTES)
            .map_err(json_patch_error),
        BodyFormat::StrategicMergePatch => {
            // Upstream answers most of these errors with a 500 (they are not typed errors);
            // a malformed patch is the client's fault: 400 with the same message.
            crest_openapi::strategic_merge(typed.unwrap_or_default(), current, body.value)
                .map_err(|e| ApiError::bad_request(e.to_string()))
        }
        _ => {
            if !body.value.is_object() {
                return Err(ApiError::bad_request(
                    "json: cannot unmarshal patch: merge patch must be a JSON object",
                ));
            }
            let mut doc = current.clone();
            json_patch::merge(&mut doc, body.value);
            Ok(doc)
        }
    }
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_patch(ops: Value, typed_ops: bool, current: &Value) -> Result<Value, ApiError> {
        let raw = serde_json::to_vec(&ops).expect("json");
        let body = PatchBody {
            fmt: BodyFormat::JsonPatch,
            value: &ops,
            raw: &raw,
            typed_ops,
            ops: Default::default(),
        };
        apply_patch(&body, current, None)
    }

    #[test]
    fn json_patches_apply_as_v4_and_fail_as_upstream() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
        // kube-runtime's first finalizer.
        let done = json_patch(
            json!([{"op": "test", "path": "/metadata/finalizers", "value": null},
                   {"op": "add", "path": "/metadata/finalizers", "value": ["x"]}]),
            true,
            &cm,
        )
        .expect("applies");
        assert_eq!(done["metadata"]["finalizers"], json!(["x"]));

        // Any failure: the generic 422, details empty.
        let e = json_patch(
            json!([{"op": "test", "path": "/metadata/name", "value": "b"}]),
            true,
            &cm,
        )
        .expect_err("test fails");
        assert_eq!(e, json_patch_failed());
        let status = e.to_status();
        assert_eq!(status["code"], 422);
        assert_eq!(status["reason"], "Invalid");
        assert_eq!(
            status["message"],
            "the server rejected our request due to an error in our request"
        );
        assert_eq!(status["details"], json!({}));

        // Decoding: 400 with upstream's messages, typed or not.
        let e = json_patch(json!({"op": "add"}), true, &cm).expect_err("not a list");
        assert_eq!((e.code, e.message.as_str()), (400, "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp"));
        let e = json_patch(json!([1]), false, &cm).expect_err("not an operation");
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                400,
                "json: cannot unmarshal number into Go value of type jsonpatch.Operation"
            )
        );
        let e =
            json_patch(json!(vec![json!({"op": "x"}); 10_001]), true, &cm).expect_err("too many");
        assert_eq!(e.code, 413);

        // Where v4 panics: upstream's plain-text 500.
        let e =
            json_patch(json!([{"op": "test", "path": "/nope"}]), true, &cm).expect_err("panics");
        assert_eq!((e.code, e.message.as_str()), (500, HANDLER_PANICKED));
        let resp = patch_answer(Err(e)).expect("a plain answer");
        assert_eq!(resp.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(
            resp.headers()[http::header::CONTENT_TYPE],
            "text/plain; charset=utf-8"
        );
        // Other errors stay Status errors.
        assert!(patch_answer(Err(json_patch_failed())).is_err());
    }
}

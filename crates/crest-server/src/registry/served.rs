//! The version of every object the registry returns or stores: the one owner of conversion
//! (upstream: a CRD's `crConverter`, which the versioning codec runs on every decode from
//! storage and every encode to it, `apiextensions-apiserver/pkg/apiserver/conversion`; for a
//! built-in kind, its conversion through the internal type).
//!
//! A custom resource stays stored in the version it was written in until it is written again,
//! whatever its CRD says now. So the version an object is in is its own `apiVersion`, never
//! the CRD's current storage version: after the storage version moved, or an old version
//! stopped being served, objects in the old version are still converted to the version asked
//! for (every version of `spec.versions` converts, served or not, as upstream's
//! `validVersions`). Every path that returns an object (get, list, watch, the answers of
//! creates, updates, patches, deletes and deletecollection, `/status`, `/scale`) goes through
//! [`Registry::serve`], [`Registry::serve_async`], [`Registry::serve_many`] or
//! [`Registry::to_served`]; every write through [`Registry::to_storage_version`] or
//! [`Registry::in_storage_version`].

use super::resources::ResourceDef;
use super::{to_bytes, Registry};
use crate::store::cache::{leading_api_version, CachedObject};
use bytes::Bytes;
use crest_api::ApiError;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::Arc;

/// Whether an object whose `apiVersion` is `have()` is returned through `def` as it is: the
/// decision every returned object goes by.
fn served_as_is<'a>(def: &ResourceDef, have: impl FnOnce() -> Option<Cow<'a, str>>) -> bool {
    if def.conversion.is_some() {
        // A built-in kind's objects are all stored in its storage version.
        return !def.converts();
    }
    if def.crd_name.is_none() {
        return true;
    }
    have().is_some_and(|v| def.is_version(&v))
}

fn api_version_of(v: &Value) -> Option<Cow<'_, str>> {
    v.get("apiVersion")
        .and_then(Value::as_str)
        .map(Cow::Borrowed)
}

/// A `None` conversion that only changes `apiVersion` (the served version's schema neither
/// prunes nor defaults), done on the cached bytes: they start with the `apiVersion` the object
/// was stored in (serde_json writes keys in order), which is replaced without parsing the
/// object. `None` when that does not apply.
fn apiversion_only(def: &ResourceDef, json: &[u8]) -> Option<Bytes> {
    if def.crd_name.is_none() || def.webhook_conversion.is_some() {
        return None;
    }
    if def.cr_schema.as_deref().is_some_and(|s| s.normalizes()) {
        return None;
    }
    let have = leading_api_version(json)?;
    // `{"apiVersion":"` + the version + `"`.
    let rest = json.get(15 + have.len() + 1..)?;
    let served = format!("{{\"apiVersion\":\"{}\"", def.api.api_version());
    let mut out = Vec::with_capacity(served.len() + rest.len());
    out.extend_from_slice(served.as_bytes());
    out.extend_from_slice(rest);
    Some(Bytes::from(out))
}

impl Registry {
    /// The bytes of a cached object as returned through `def`: untouched when it is in that
    /// version, else converted. Not for a CRD converting by webhook (see
    /// [`Registry::serve_async`]; a watch converts ahead with [`Registry::serve_many`]).
    pub(crate) fn serve(&self, def: &ResourceDef, obj: &CachedObject) -> Result<Bytes, ApiError> {
        if served_as_is(def, || obj.api_version()) {
            return Ok(obj.json.clone());
        }
        if let Some(b) = apiversion_only(def, &obj.json) {
            return Ok(b);
        }
        let v = self.convert(def, obj.value()?)?;
        to_bytes(&v)
    }

    /// [`Registry::serve`], through the conversion webhook when the CRD has one.
    pub(crate) async fn serve_async(
        &self,
        def: &ResourceDef,
        obj: &CachedObject,
    ) -> Result<Bytes, ApiError> {
        if def.webhook_conversion.is_none() || served_as_is(def, || obj.api_version()) {
            return self.serve(def, obj);
        }
        let v = self.to_served(def, obj.value()?).await?;
        to_bytes(&v)
    }

    /// The returned bytes of a list's (or a watch's) objects: those not in `def`'s version
    /// through the conversion webhook in one review when the CRD has one (upstream converts a
    /// list, not its items one by one).
    pub(crate) async fn serve_many(
        &self,
        def: &ResourceDef,
        objs: &[Arc<CachedObject>],
    ) -> Result<Vec<Bytes>, ApiError> {
        if def.webhook_conversion.is_none() {
            return objs.iter().map(|o| self.serve(def, o)).collect();
        }
        let convert: Vec<usize> = (0..objs.len())
            .filter(|&i| !served_as_is(def, || objs[i].api_version()))
            .collect();
        let mut values = convert
            .iter()
            .map(|&i| objs[i].value())
            .collect::<Result<Vec<_>, _>>()?;
        if !values.is_empty() {
            self.call_webhook(def, &mut values, &def.api.api_version(), true)
                .await?;
        }
        let mut out: Vec<Bytes> = objs.iter().map(|o| o.json.clone()).collect();
        for (i, mut v) in convert.into_iter().zip(values) {
            self.normalize_served(def, &mut v);
            out[i] = to_bytes(&v)?;
        }
        Ok(out)
    }

    /// An object (in the version it is stored or was written in) as returned through `def`,
    /// without a webhook: an error for a CRD converting by webhook whose object is in another
    /// version (see [`Registry::to_served`]).
    pub(crate) fn convert(&self, def: &ResourceDef, mut v: Value) -> Result<Value, ApiError> {
        if served_as_is(def, || api_version_of(&v)) {
            return Ok(v);
        }
        if let Some(c) = &def.conversion {
            return Ok(c.to_served(v));
        }
        if def.webhook_conversion.is_some() {
            return Err(ApiError::internal(format!(
                "{} converts through its webhook only",
                def.api.group_resource()
            )));
        }
        // The `None` strategy: only apiVersion changes.
        if let Some(o) = v.as_object_mut() {
            o.insert("apiVersion".into(), def.api.api_version().into());
        }
        // The served version's schema prunes and defaults what it reads (apiextensions'
        // schema-coercing converter and defaulting of the decoded version).
        self.normalize_served(def, &mut v);
        Ok(v)
    }

    /// An object (in the version it is stored or was written in) as returned through `def`,
    /// through the conversion webhook when the CRD has one.
    pub(crate) async fn to_served(&self, def: &ResourceDef, v: Value) -> Result<Value, ApiError> {
        if def.webhook_conversion.is_none() || served_as_is(def, || api_version_of(&v)) {
            return self.convert(def, v);
        }
        let mut v = self
            .webhook_convert_one(def, v, &def.api.api_version())
            .await?;
        self.normalize_served(def, &mut v);
        Ok(v)
    }

    /// A request's object (in `def`'s version, decoded) in the form it is stored in: a
    /// built-in kind's converted to its storage version, a custom resource's as
    /// [`Registry::in_storage_version`] makes it.
    pub(crate) async fn to_storage_version(
        &self,
        def: &ResourceDef,
        obj: &mut Value,
    ) -> Result<(), ApiError> {
        if let Some(c) = &def.conversion {
            if def.converts() {
                *obj = c.to_stored(std::mem::take(obj));
            }
            return Ok(());
        }
        self.in_storage_version(def, obj).await
    }

    /// A custom resource in whatever version (a request's, or one stored in an older storage
    /// version) converted to the current storage version (as upstream's storage encoding
    /// does on every write): through the CRD's webhook, or (`None`) with the storage
    /// apiVersion; then pruned and defaulted by the storage version's schema. Objects already
    /// in it, and built-in kinds, are left alone.
    pub(crate) async fn in_storage_version(
        &self,
        def: &ResourceDef,
        obj: &mut Value,
    ) -> Result<(), ApiError> {
        if def.crd_name.is_none()
            || api_version_of(obj).is_some_and(|v| v == def.storage_api_version)
        {
            return Ok(());
        }
        if def.webhook_conversion.is_some() {
            let storage = def.storage_api_version.clone();
            *obj = self
                .webhook_convert_one(def, std::mem::take(obj), &storage)
                .await?;
        } else if let Some(o) = obj.as_object_mut() {
            o.insert("apiVersion".into(), def.storage_api_version.clone().into());
        }
        if let Some(ss) = self.resources().stored_schema(&def.key_prefix) {
            if ss.schema.normalizes() {
                ss.schema.decode_stored(obj);
            }
        }
        Ok(())
    }

    /// Converts `objects` to `desired` through `def`'s conversion webhook (one review; `list`:
    /// the objects are a list's items). Failures are 500s worded as upstream's.
    async fn call_webhook(
        &self,
        def: &ResourceDef,
        objects: &mut [Value],
        desired: &str,
        list: bool,
    ) -> Result<(), ApiError> {
        let (Some(conversion), Some(w)) = (&def.webhook_conversion, self.webhook.get()) else {
            return Err(ApiError::internal("no conversion webhook client"));
        };
        let input = match (list, objects.first()) {
            (false, Some(o)) => crest_apiextensions::conversion::gvk_string(
                o.get("apiVersion")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
                o.get("kind").and_then(Value::as_str).unwrap_or_default(),
            ),
            _ => crest_apiextensions::conversion::gvk_string(
                &def.storage_api_version,
                &def.api.list_kind,
            ),
        };
        w.convert(conversion, objects, desired, &input, list)
            .await
            .map_err(ApiError::unknown)
    }

    /// One object through `def`'s conversion webhook to `desired`.
    async fn webhook_convert_one(
        &self,
        def: &ResourceDef,
        v: Value,
        desired: &str,
    ) -> Result<Value, ApiError> {
        let mut one = [v];
        self.call_webhook(def, &mut one, desired, false).await?;
        let [v] = one;
        Ok(v)
    }

    /// The served version's schema prunes and defaults what it reads.
    fn normalize_served(&self, def: &ResourceDef, v: &mut Value) {
        if let Some(schema) = def.cr_schema.as_deref().filter(|s| s.normalizes()) {
            schema.decode_stored(v);
        }
    }
}

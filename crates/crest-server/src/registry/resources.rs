//! The set of resources the server serves, derived from the built-ins and the established CRDs.
//!
//! It is rebuilt (never mutated in place) whenever a CRD changes in the cache, so a request holds
//! one consistent `Arc<Resources>` for its whole life.

use super::conversion::Conversion;
use super::customresource::CustomResourceStrategy;
use super::strategy::Strategy;
use crest_api::all_verbs;
use crest_api::{ApiResource, GroupVersion};
use crest_apiextensions::customresource::CrSchema;
use crest_table::TableStyle;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::store::keys;
use crate::store::reads::{StoredSchema, StoredSchemas};

/// One served resource in one version.
pub(crate) struct ResourceDef {
    pub api: ApiResource,
    /// Storage keys: `<prefix><namespace>/<name>` or `<prefix><name>`; ends with `/`.
    pub key_prefix: String,
    /// The version objects are stored in (`apiVersion` written to storage).
    pub storage_api_version: String,
    pub strategy: Arc<dyn Strategy>,
    pub table: TableStyle,
    /// For custom resources: the CRD's name, and whether it is terminating (creates refused).
    pub crd_name: Option<String>,
    pub terminating: bool,
    /// For custom resources: the version's `openAPIV3Schema` (published in OpenAPI).
    pub schema: Option<Value>,
    /// For custom resources: the request version's compiled schema (pruning, defaulting and
    /// validation of writes).
    pub cr_schema: Option<Arc<CrSchema>>,
    /// For custom resources: the CRD's `spec.preserveUnknownFields` (true only in CRDs from
    /// v1beta1): nothing is pruned, apply deduces unknown fields, OpenAPI v2 publishes the type.
    pub preserve_unknown_fields: bool,
    /// For custom resources: the version's `selectableFields`, as field selector names (the
    /// `jsonPath` without its leading `.`, e.g. `spec.color`).
    pub selectable_fields: Vec<String>,
    /// For built-in kinds: the published definition the body is decoded against (unknown
    /// fields found and dropped per fieldValidation, as kube-apiserver's typed decoding).
    pub typed: Option<&'static str>,
    /// For built-in kinds with their own field label conversion: each selectable label with the
    /// stored object's field it reads (see [`crest_selectors::FieldLabels::Builtin`]).
    pub field_labels: Option<&'static [(&'static str, &'static str)]>,
    /// For a built-in resource served in another version than its objects are stored in.
    pub conversion: Option<Arc<dyn Conversion>>,
    /// For a deprecated custom resource version: the warning every request through it gets.
    pub deprecation_warning: Option<String>,
    /// For a custom resource whose CRD converts by webhook: its `spec.conversion`.
    pub webhook_conversion: Option<Arc<Value>>,
    /// The field manager's view of this resource version, derived on first use (see
    /// [`ResourceDef::managed`]).
    pub managed: std::sync::OnceLock<Option<Arc<Managed>>>,
}

/// What the field manager needs for one resource version (server-side apply, managedFields).
pub(crate) struct Managed {
    /// The type applies merge by and field sets are computed against.
    pub schema: crest_managedfields::Schema,
    /// The request version, `group/version`.
    pub api_version: String,
    /// A built-in kind's Go zero value, which a create is compared against (upstream's
    /// `New()` object); `None` for a custom resource (compared against nothing).
    pub zero: Option<Value>,
    reset_main: Option<crest_managedfields::Set>,
    reset_status: Option<crest_managedfields::Set>,
}

impl Managed {
    /// The fields a write through `subresource` (`""`: the main resource) never owns.
    pub(crate) fn reset_fields(&self, subresource: &str) -> Option<&crest_managedfields::Set> {
        match subresource {
            "" => self.reset_main.as_ref(),
            "status" => self.reset_status.as_ref(),
            _ => None,
        }
    }
}

impl ResourceDef {
    /// A built-in kind's resource, stored in the version it is served in.
    pub(crate) fn builtin(
        api: ApiResource,
        key_prefix: &str,
        strategy: Arc<dyn Strategy>,
        table: TableStyle,
        typed: &'static str,
    ) -> ResourceDef {
        ResourceDef {
            storage_api_version: api.api_version(),
            api,
            key_prefix: key_prefix.into(),
            strategy,
            table,
            crd_name: None,
            terminating: false,
            schema: None,
            cr_schema: None,
            preserve_unknown_fields: false,
            selectable_fields: Vec::new(),
            typed: Some(typed),
            field_labels: None,
            conversion: None,
            deprecation_warning: None,
            webhook_conversion: None,
            managed: Default::default(),
        }
    }

    /// What the field manager needs for this resource version, derived once on first use:
    /// the merge type (the built-in kind's published definition, or the custom resource
    /// version's structural schema, deduced when it has none; writes are recorded against it
    /// in the request's version), the reset fields and a built-in kind's Go zero value.
    /// `None` when the type does not compile: no managedFields are recorded then.
    pub(crate) fn managed(&self) -> Option<&Managed> {
        self.managed
            .get_or_init(|| {
                let defs = crest_openapi::builtin_definitions();
                let compiled = match self.typed {
                    Some(name) => crest_managedfields::Schema::from_definition(name, defs),
                    None => crest_managedfields::Schema::from_crd_with(
                        self.schema.as_ref(),
                        defs,
                        self.preserve_unknown_fields,
                    ),
                };
                let schema = match compiled {
                    Ok(s) => s,
                    Err(e) => {
                        tracing::warn!(resource = %self.api.group_resource(), error = %e, "no merge schema: managedFields not recorded");
                        return None;
                    }
                };
                let api_version = self.api.api_version();
                // GetResetFields: `status` on the main resource of a kind with a status
                // subresource, `spec` on its /status.
                let reset = |field: &str| {
                    self.strategy
                        .status_subresource()
                        .then(|| crest_managedfields::reset_fields(&[&[field]]))
                };
                Some(Arc::new(Managed {
                    zero: self
                        .typed
                        .and_then(|_| crest_codec::protobuf::zero_object(&api_version, &self.api.kind)),
                    reset_main: reset("status"),
                    reset_status: reset("spec"),
                    schema,
                    api_version,
                }))
            })
            .as_deref()
    }

    /// Whether objects written through this version are stored in another one (writes
    /// convert). Reads decide by each object's own version, which may be neither
    /// (`registry/served.rs`).
    pub(crate) fn converts(&self) -> bool {
        !self.is_version(&self.storage_api_version)
    }

    /// Whether `api_version` (`group/version`) names this resource's version (without
    /// building the latter: every read and write asks).
    pub(crate) fn is_version(&self, api_version: &str) -> bool {
        let (group, version) = (&self.api.group, &self.api.version);
        if group.is_empty() {
            api_version == version
        } else {
            api_version
                .strip_prefix(group.as_str())
                .and_then(|rest| rest.strip_prefix('/'))
                == Some(version.as_str())
        }
    }

    pub(crate) fn key(&self, namespace: Option<&str>, name: &str) -> String {
        keys::object_key(
            &self.key_prefix,
            namespace.filter(|_| self.api.namespaced),
            name,
        )
    }

    /// The fields a field selector may name (the resource's field label conversion).
    pub(crate) fn field_labels(&self) -> crest_selectors::FieldLabels<'_> {
        if self.crd_name.is_some() {
            crest_selectors::FieldLabels::CustomResource {
                namespaced: self.api.namespaced,
                selectable: &self.selectable_fields,
            }
        } else if let Some(fields) = self.field_labels {
            crest_selectors::FieldLabels::Builtin { fields }
        } else {
            crest_selectors::FieldLabels::Default
        }
    }

    /// The prefix of a list: one namespace, or everything.
    pub(crate) fn list_prefix(&self, namespace: Option<&str>) -> String {
        keys::list_prefix(&self.key_prefix, namespace.filter(|_| self.api.namespaced))
    }
}

impl StoredSchemas for Resources {
    fn stored_schema(&self, key: &str) -> Option<&StoredSchema> {
        Resources::stored_schema(self, key)
    }
}

/// A served API group with its versions, most preferred first.
#[derive(Clone, Debug, Default)]
pub(crate) struct GroupInfo {
    pub name: String,
    pub versions: Vec<String>,
}

#[derive(Default)]
pub(crate) struct Resources {
    by_path: HashMap<(String, String, String), Arc<ResourceDef>>,
    /// Per group-version, the resources in discovery order.
    by_gv: BTreeMap<GroupVersion, Vec<Arc<ResourceDef>>>,
    /// Groups in discovery order (built-ins first, then CRD groups by name).
    pub groups: Vec<GroupInfo>,
    /// Per custom resource key prefix (`/registry/<group>/<plural>/`), the storage version's
    /// schema, applied to objects read from storage.
    stored: HashMap<String, StoredSchema>,
    /// What each served CRD contributes, by CRD name: reused by the next rebuild while the CRD's
    /// resourceVersion is unchanged, so a CRD change does not recompile every other CRD's
    /// schemas (500 CRDs installed: CRD create -> served stays fast).
    crds: HashMap<String, Arc<CrdContribution>>,
    /// What every build holds whatever the CRDs.
    builtins: Arc<Builtins>,
}

/// What the served set holds whatever the CRDs: the built-in resources (CRDs' own included)
/// and API groups. `registry/builtin.rs` lists them and the registry hands them over when it
/// first builds the set (this module does not import the kinds' modules: they import it).
#[derive(Default)]
pub(crate) struct Builtins {
    /// Every built-in resource, in discovery order within each group version.
    pub defs: Vec<Arc<ResourceDef>>,
    /// The built-in API group versions, in discovery order.
    pub groups: Vec<BuiltinGroup>,
}

/// One built-in API group version: served when one of its resources is, or always when a
/// create-only resource (the review APIs, served outside the pipeline) is in it.
pub(crate) struct BuiltinGroup {
    pub name: &'static str,
    pub version: &'static str,
    pub create_only: bool,
}

/// The served resource versions, storage schema and group versions of one CRD.
struct CrdContribution {
    resource_version: String,
    defs: Vec<Arc<ResourceDef>>,
    stored: Option<(String, StoredSchema)>,
    group: String,
    versions: Vec<String>,
}

/// A served version's `selectableFields[*].jsonPath`, named as field selectors name them
/// (upstream trims the leading `.`).
fn selectable_fields(version: &Value) -> Vec<String> {
    version
        .get("selectableFields")
        .and_then(Value::as_array)
        .map(|fields| {
            fields
                .iter()
                .filter_map(|f| f.get("jsonPath").and_then(Value::as_str))
                .map(|p| p.strip_prefix('.').unwrap_or(p).to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Kubernetes' version priority: GA > beta > alpha, higher numbers first, others last by name.
pub(crate) fn version_priority_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn parse(v: &str) -> Option<(u32, u32, u32)> {
        let rest = v.strip_prefix('v')?;
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        let major: u32 = digits.parse().ok()?;
        let tail = &rest[digits.len()..];
        if tail.is_empty() {
            return Some((3, major, 0));
        }
        for (level, name) in [(2, "beta"), (1, "alpha")] {
            if let Some(n) = tail.strip_prefix(name) {
                if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) {
                    return Some((level, major, n.parse().ok()?));
                }
            }
        }
        None
    }
    match (parse(a), parse(b)) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

fn str_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn is_condition_true(crd: &Value, cond: &str) -> bool {
    crd.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == cond && c["status"] == "True")
        })
}

impl Resources {
    /// Builds the served set from the built-ins and all CRDs currently stored.
    pub(crate) fn build(builtins: Arc<Builtins>, crds: &[Value]) -> Resources {
        Resources::build_from(builtins, crds, None)
    }

    /// Builds the served set again, with the same built-ins, reusing what unchanged CRDs
    /// contributed to `self`. A CRD for which [`Resources::has_crd_at`] holds may be given as
    /// its metadata (name and resourceVersion) alone.
    pub(crate) fn rebuild(&self, crds: &[Value]) -> Resources {
        Resources::build_from(self.builtins.clone(), crds, Some(self))
    }

    /// Whether CRD `name` at `resource_version` contributed to this set (a rebuild will reuse
    /// that, so the caller may skip decoding the CRD).
    pub(crate) fn has_crd_at(&self, name: &str, resource_version: i64) -> bool {
        self.crds
            .get(name)
            .is_some_and(|c| c.resource_version.parse() == Ok(resource_version))
    }

    fn build_from(
        builtins: Arc<Builtins>,
        crds: &[Value],
        previous: Option<&Resources>,
    ) -> Resources {
        let mut r = Resources::default();
        for def in &builtins.defs {
            r.add_def(def.clone());
        }
        let mut crd_groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for crd in crds {
            let name = crest_api::meta::name(crd);
            let rv = crest_api::meta::resource_version(crd);
            let reused = previous
                .and_then(|p| p.crds.get(name))
                .filter(|c| c.resource_version == rv)
                .cloned();
            let Some(c) = reused.or_else(|| crd_contribution(crd).map(Arc::new)) else {
                continue;
            };
            for d in &c.defs {
                r.add_def(d.clone());
            }
            if let Some((prefix, stored)) = &c.stored {
                r.stored.insert(prefix.clone(), stored.clone());
            }
            crd_groups
                .entry(c.group.clone())
                .or_default()
                .extend(c.versions.iter().cloned());
            r.crds.insert(name.to_string(), c);
        }
        for g in &builtins.groups {
            let gv = GroupVersion {
                group: g.name.to_string(),
                version: g.version.to_string(),
            };
            if r.by_gv.contains_key(&gv) || g.create_only {
                r.groups.push(GroupInfo {
                    name: g.name.to_string(),
                    versions: vec![g.version.to_string()],
                });
            }
        }
        for (name, mut versions) in crd_groups {
            versions.sort_by(|a, b| version_priority_cmp(a, b));
            versions.dedup();
            r.groups.push(GroupInfo { name, versions });
        }
        r.builtins = builtins;
        r
    }

    fn add_def(&mut self, def: Arc<ResourceDef>) {
        let a = &def.api;
        self.by_path.insert(
            (a.group.clone(), a.version.clone(), a.plural.clone()),
            def.clone(),
        );
        self.by_gv.entry(a.group_version()).or_default().push(def);
    }

    /// Every custom resource's key prefix with its storage schema.
    pub(crate) fn stored_schemas(&self) -> impl Iterator<Item = (&String, &StoredSchema)> {
        self.stored.iter()
    }

    /// The storage schema for a stored key (`/registry/<group>/<plural>/...`).
    pub(crate) fn stored_schema(&self, key: &str) -> Option<&StoredSchema> {
        self.stored.get(&keys::prefix_of(key)?)
    }

    pub(crate) fn lookup(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Option<Arc<ResourceDef>> {
        self.by_path
            .get(&(group.to_string(), version.to_string(), plural.to_string()))
            .cloned()
    }

    /// Resources of one group-version, in discovery order.
    pub(crate) fn group_version(&self, gv: &GroupVersion) -> Option<&[Arc<ResourceDef>]> {
        self.by_gv.get(gv).map(Vec::as_slice)
    }

    pub(crate) fn group(&self, name: &str) -> Option<&GroupInfo> {
        self.groups.iter().find(|g| g.name == name)
    }

    /// Every served resource definition.
    pub(crate) fn all(&self) -> impl Iterator<Item = &Arc<ResourceDef>> {
        self.by_gv.values().flatten()
    }

    /// One definition per stored resource (the storage version's), for work over all objects.
    pub(crate) fn storage_defs(&self) -> Vec<Arc<ResourceDef>> {
        let mut seen = std::collections::HashSet::new();
        let mut out = vec![];
        for d in self.all() {
            if seen.insert(d.key_prefix.clone()) {
                out.push(d.clone());
            }
        }
        out
    }
}

/// The warning of a request through a deprecated version: its `deprecationWarning`, or
/// apiextensions-apiserver's default naming the highest-priority served, not deprecated version
/// of higher priority.
fn deprecation_warning(spec: &Value, version: &Value) -> Option<String> {
    if version["deprecated"] != true {
        return None;
    }
    if let Some(w) = version["deprecationWarning"].as_str() {
        return Some(w.to_string());
    }
    let group = spec["group"].as_str().unwrap_or_default();
    let kind = spec
        .pointer("/names/kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let name = version["name"].as_str().unwrap_or_default();
    let mut msg = format!("{group}/{name} {kind} is deprecated");
    let newer = spec["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["served"] == true && v["deprecated"] != true)
        .filter_map(|v| v["name"].as_str())
        .filter(|v| version_priority_cmp(v, name) == std::cmp::Ordering::Less)
        .min_by(|a, b| version_priority_cmp(a, b));
    if let Some(v) = newer {
        msg.push_str(&format!("; use {group}/{v} {kind}"));
    }
    Some(msg)
}

/// What one CRD contributes to the served set (None unless established with accepted names).
fn crd_contribution(crd: &Value) -> Option<CrdContribution> {
    let mut stored = None;
    let mut defs = vec![];
    let mut served = vec![];
    // Only CRDs whose names were accepted and that are established are served.
    if !is_condition_true(crd, "Established") || !is_condition_true(crd, "NamesAccepted") {
        return None;
    }
    let spec = &crd["spec"];
    let names = &crd["status"]["acceptedNames"];
    let group = spec["group"].as_str().unwrap_or_default().to_string();
    let plural = names["plural"].as_str().unwrap_or_default().to_string();
    let kind = names["kind"].as_str().unwrap_or_default().to_string();
    if group.is_empty() || plural.is_empty() || kind.is_empty() {
        return None;
    }
    let namespaced = spec["scope"] == "Namespaced";
    let versions = spec["versions"].as_array().cloned().unwrap_or_default();
    let storage_version = versions
        .iter()
        .find(|v| v["storage"] == true)
        .and_then(|v| v["name"].as_str())
        .unwrap_or_default()
        .to_string();
    let terminating = crd
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null());
    let crd_name = crest_api::meta::name(crd).to_string();
    let webhook_conversion = spec
        .get("conversion")
        .filter(|c| c["strategy"] == "Webhook")
        .cloned()
        .map(Arc::new);
    let keeps_unknown_fields = spec["preserveUnknownFields"] == true;
    let mut compiled: HashMap<String, Arc<CrSchema>> = HashMap::new();
    for v in &versions {
        if let Some(mut c) = CrSchema::compile(v.pointer("/schema/openAPIV3Schema")) {
            if keeps_unknown_fields {
                c = c.keeping_unknown_fields();
            }
            compiled.insert(
                v["name"].as_str().unwrap_or_default().to_string(),
                Arc::new(c),
            );
        }
    }
    if let Some(c) = compiled.get(&storage_version) {
        let by_api_version = compiled
            .iter()
            .map(|(v, s)| (format!("{group}/{v}"), s.clone()))
            .collect();
        stored = Some((
            keys::resource_prefix(&group, &plural),
            StoredSchema {
                schema: c.clone(),
                versions: Arc::new(by_api_version),
                multi_version: versions.len() > 1,
                crd_revision: crest_api::meta::resource_version(crd).parse().unwrap_or(0),
            },
        ));
    }
    for v in versions.iter().filter(|v| v["served"] == true) {
        let version = v["name"].as_str().unwrap_or_default().to_string();
        let mut subresources = vec![];
        if v.pointer("/subresources/status")
            .is_some_and(|s| !s.is_null())
        {
            subresources.push("status".to_string());
        }
        if v.pointer("/subresources/scale")
            .is_some_and(|s| !s.is_null())
        {
            subresources.push("scale".to_string());
        }
        let api = ApiResource {
            group: group.clone(),
            version: version.clone(),
            plural: plural.clone(),
            singular: names["singular"].as_str().unwrap_or_default().to_string(),
            kind: kind.clone(),
            list_kind: names["listKind"]
                .as_str()
                .map(str::to_string)
                .unwrap_or(format!("{kind}List")),
            namespaced,
            verbs: all_verbs(),
            short_names: str_list(names.get("shortNames")),
            categories: str_list(names.get("categories")),
            subresources,
        };
        let cr_schema = compiled.get(&version).cloned();
        let strategy = Arc::new(CustomResourceStrategy::new(&api, v, cr_schema.clone()));
        defs.push(Arc::new(ResourceDef {
            api,
            key_prefix: keys::resource_prefix(&group, &plural),
            storage_api_version: format!("{group}/{storage_version}"),
            strategy,
            table: TableStyle::Columns(Arc::new(crest_table::Columns::for_version(v))),
            crd_name: Some(crd_name.clone()),
            terminating,
            schema: v.pointer("/schema/openAPIV3Schema").cloned(),
            cr_schema,
            preserve_unknown_fields: keeps_unknown_fields,
            selectable_fields: selectable_fields(v),
            typed: None,
            field_labels: None,
            conversion: None,
            deprecation_warning: deprecation_warning(spec, v),
            webhook_conversion: webhook_conversion.clone(),
            managed: Default::default(),
        }));
        served.push(version);
    }
    Some(CrdContribution {
        resource_version: crest_api::meta::resource_version(crd).to_string(),
        defs,
        stored,
        group,
        versions: served,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_order() {
        let mut v = vec![
            "v1alpha1",
            "v2",
            "v1beta1",
            "v1",
            "foo",
            "v10beta3",
            "v11alpha2",
            "v12alpha1",
        ];
        v.sort_by(|a, b| version_priority_cmp(a, b));
        assert_eq!(
            v,
            vec![
                "v2",
                "v1",
                "v10beta3",
                "v1beta1",
                "v12alpha1",
                "v11alpha2",
                "v1alpha1",
                "foo"
            ]
        );
    }
}

//! core/v1 Event and events.k8s.io/v1 Event (upstream pkg/registry/core/event, whose storage
//! the events.k8s.io group serves too): one stored object, two views. Objects are stored as
//! core/v1 Events under `/registry/events/`; events.k8s.io/v1 converts through
//! [`EventsV1Conversion`] (regarding <-> involvedObject, note <-> message, ...). Expiry after
//! `--event-ttl` is `controllers::event_ttl`.

use crate::registry::conversion::Conversion;
use crate::registry::resources::ResourceDef;
use crate::registry::strategy::Strategy;
use crate::store::keys::EVENT_PREFIX;
use crest_api::validation::{name_is_dns_subdomain, name_is_path_segment, NameValidator};
use crest_api::{ApiResource, FieldErrors};
use crest_core_api::event::{self, RequestVersion};
use crest_table::TableStyle;
use serde_json::Value;
use std::sync::Arc;

/// core/v1's field label conversion (`AddFieldLabelConversionsForEvent`) with the stored
/// field each label reads (`ToSelectableFields`: `source` falls back to reportingComponent).
const CORE_FIELD_LABELS: &[(&str, &str)] = &[
    ("involvedObject.kind", "involvedObject.kind"),
    ("involvedObject.namespace", "involvedObject.namespace"),
    ("involvedObject.name", "involvedObject.name"),
    ("involvedObject.uid", "involvedObject.uid"),
    ("involvedObject.apiVersion", "involvedObject.apiVersion"),
    (
        "involvedObject.resourceVersion",
        "involvedObject.resourceVersion",
    ),
    ("involvedObject.fieldPath", "involvedObject.fieldPath"),
    ("reason", "reason"),
    ("reportingComponent", "reportingComponent"),
    ("source", "source.component|reportingComponent"),
    ("type", "type"),
    ("metadata.namespace", "metadata.namespace"),
    ("metadata.name", "metadata.name"),
];

/// events.k8s.io/v1's field label conversion: its labels mapped to the stored fields.
const EVENTS_V1_FIELD_LABELS: &[(&str, &str)] = &[
    ("reason", "reason"),
    ("regarding.kind", "involvedObject.kind"),
    ("regarding.namespace", "involvedObject.namespace"),
    ("regarding.name", "involvedObject.name"),
    ("regarding.uid", "involvedObject.uid"),
    ("regarding.apiVersion", "involvedObject.apiVersion"),
    (
        "regarding.resourceVersion",
        "involvedObject.resourceVersion",
    ),
    ("regarding.fieldPath", "involvedObject.fieldPath"),
    ("reportingController", "reportingComponent"),
    ("source", "source.component|reportingComponent"),
    ("type", "type"),
    ("metadata.namespace", "metadata.namespace"),
    ("metadata.name", "metadata.name"),
];

pub(crate) fn defs() -> Vec<ResourceDef> {
    // The same event REST serves both groups, short name included.
    let api = |group: &str| {
        ApiResource::builtin(group, "v1", "events", "Event", true).with_short_names(&["ev"])
    };
    let mut core = ResourceDef::builtin(
        api(""),
        EVENT_PREFIX,
        Arc::new(EventStrategy {
            version: RequestVersion::CoreV1,
        }),
        TableStyle::Builtin(&crest_table::printers::EVENT),
        "io.k8s.api.core.v1.Event",
    );
    core.field_labels = Some(CORE_FIELD_LABELS);
    let mut events = ResourceDef::builtin(
        api("events.k8s.io"),
        EVENT_PREFIX,
        Arc::new(EventStrategy {
            version: RequestVersion::EventsV1,
        }),
        TableStyle::Builtin(&crest_table::printers::EVENTS_V1_EVENT),
        "io.k8s.api.events.v1.Event",
    );
    events.field_labels = Some(EVENTS_V1_FIELD_LABELS);
    events.storage_api_version = "v1".into();
    events.conversion = Some(Arc::new(EventsV1Conversion));
    vec![core, events]
}

/// events.k8s.io/v1 Event <-> the stored core/v1 Event.
pub(crate) struct EventsV1Conversion;

impl Conversion for EventsV1Conversion {
    fn to_served(&self, stored: Value) -> Value {
        event::to_events_v1(stored)
    }
    fn to_stored(&self, served: Value) -> Value {
        event::to_core_v1(served)
    }
}

/// Events: no generation, no status; validated as the request's version asks
/// (`ValidateEventCreate` / `ValidateEventUpdate`).
pub(crate) struct EventStrategy {
    version: RequestVersion,
}

impl Strategy for EventStrategy {
    fn name_validator(&self) -> NameValidator {
        match self.version {
            // core/v1 validates no ObjectMeta of its own: only the generic path-segment rule.
            RequestVersion::CoreV1 => name_is_path_segment,
            RequestVersion::EventsV1 => name_is_dns_subdomain,
        }
    }
    fn allow_unconditional_update(&self) -> bool {
        true
    }
    fn allow_create_on_update(&self) -> bool {
        true
    }
    fn uses_generation(&self) -> bool {
        false
    }
    /// `DefaultGarbageCollectionPolicy`: Unsupported.
    fn garbage_collection_policy_supported(&self) -> bool {
        false
    }
    fn prepare_create(&self, obj: &mut Value) {
        *obj = event::canonical_core_v1(std::mem::take(obj));
    }
    fn prepare_update(&self, new: &mut Value, _old: &Value) {
        *new = event::canonical_core_v1(std::mem::take(new));
    }
    fn validate_create(&self, obj: &Value, _warnings: &mut Vec<String>) -> FieldErrors {
        event::validate_create(obj, self.version)
    }
    fn validate_update(
        &self,
        new: &Value,
        old: &Value,
        _warnings: &mut Vec<String>,
    ) -> FieldErrors {
        event::validate_update(new, old, self.version)
    }
}

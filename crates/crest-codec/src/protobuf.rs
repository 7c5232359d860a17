//! Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`), decoded into the
//! JSON a typed client would have sent, so everything after decoding is the JSON pipeline.
//!
//! kubectl's typed clientset writes built-in kinds this way (`kubectl create namespace`), and a
//! protobuf-configured client-go sends DeleteOptions this way too. A body is the magic `k8s\0`
//! followed by a `runtime.Unknown` whose `raw` holds the object's own message. The messages
//! below are hand-written from upstream's generated.proto files (field numbers cited per
//! message); fields a message does not declare are skipped, as gogo-protobuf does.
//!
//! Go decodes into structs, so the JSON produced follows the Go types' JSON encoding: a plain
//! string field that is empty is absent (`omitempty`), while pointer fields (proto2 `optional`
//! with presence, e.g. DeleteOptions' `gracePeriodSeconds`) are present whenever they were sent.

use crest_api::ApiError;
use prost::Message;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// `runtime/serializer/protobuf`'s prefix of every protobuf body.
pub const MAGIC: [u8; 4] = *b"k8s\0";

// k8s.io/apimachinery/pkg/runtime/generated.proto

/// `runtime.Unknown`: typeMeta = 1, raw = 2, contentEncoding = 3, contentType = 4.
#[derive(Clone, PartialEq, Message)]
pub struct Unknown {
    #[prost(message, optional, tag = "1")]
    pub type_meta: Option<TypeMeta>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub raw: Option<Vec<u8>>,
    #[prost(string, optional, tag = "3")]
    pub content_encoding: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub content_type: Option<String>,
}

/// `runtime.TypeMeta`: apiVersion = 1, kind = 2.
#[derive(Clone, PartialEq, Message)]
pub struct TypeMeta {
    #[prost(string, optional, tag = "1")]
    pub api_version: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub kind: Option<String>,
}

// k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto

/// `meta/v1 Time` (as Timestamp): seconds = 1, nanos = 2. Empty bytes are Go's zero time.
#[derive(Clone, PartialEq, Message)]
pub struct Time {
    #[prost(int64, optional, tag = "1")]
    pub seconds: Option<i64>,
    #[prost(int32, optional, tag = "2")]
    pub nanos: Option<i32>,
}

/// `meta/v1 ObjectMeta`: name = 1, generateName = 2, namespace = 3, selfLink = 4, uid = 5,
/// resourceVersion = 6, generation = 7, creationTimestamp = 8, deletionTimestamp = 9,
/// deletionGracePeriodSeconds = 10, labels = 11, annotations = 12, ownerReferences = 13,
/// finalizers = 14, managedFields = 17 (15 clusterName and 16 initializers are gone).
#[derive(Clone, PartialEq, Message)]
pub struct ObjectMeta {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub generate_name: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub namespace: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub self_link: Option<String>,
    #[prost(string, optional, tag = "5")]
    pub uid: Option<String>,
    #[prost(string, optional, tag = "6")]
    pub resource_version: Option<String>,
    #[prost(int64, optional, tag = "7")]
    pub generation: Option<i64>,
    #[prost(message, optional, tag = "8")]
    pub creation_timestamp: Option<Time>,
    #[prost(message, optional, tag = "9")]
    pub deletion_timestamp: Option<Time>,
    #[prost(int64, optional, tag = "10")]
    pub deletion_grace_period_seconds: Option<i64>,
    #[prost(btree_map = "string, string", tag = "11")]
    pub labels: BTreeMap<String, String>,
    #[prost(btree_map = "string, string", tag = "12")]
    pub annotations: BTreeMap<String, String>,
    #[prost(message, repeated, tag = "13")]
    pub owner_references: Vec<OwnerReference>,
    #[prost(string, repeated, tag = "14")]
    pub finalizers: Vec<String>,
    #[prost(message, repeated, tag = "17")]
    pub managed_fields: Vec<ManagedFieldsEntry>,
}

/// `meta/v1 OwnerReference`: kind = 1, name = 3, uid = 4, apiVersion = 5, controller = 6,
/// blockOwnerDeletion = 7.
#[derive(Clone, PartialEq, Message)]
pub struct OwnerReference {
    #[prost(string, optional, tag = "1")]
    pub kind: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub name: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub uid: Option<String>,
    #[prost(string, optional, tag = "5")]
    pub api_version: Option<String>,
    #[prost(bool, optional, tag = "6")]
    pub controller: Option<bool>,
    #[prost(bool, optional, tag = "7")]
    pub block_owner_deletion: Option<bool>,
}

/// `meta/v1 ManagedFieldsEntry`: manager = 1, operation = 2, apiVersion = 3, time = 4,
/// fieldsType = 6, fieldsV1 = 7, subresource = 8.
#[derive(Clone, PartialEq, Message)]
pub struct ManagedFieldsEntry {
    #[prost(string, optional, tag = "1")]
    pub manager: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub operation: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub api_version: Option<String>,
    #[prost(message, optional, tag = "4")]
    pub time: Option<Time>,
    #[prost(string, optional, tag = "6")]
    pub fields_type: Option<String>,
    #[prost(message, optional, tag = "7")]
    pub fields_v1: Option<FieldsV1>,
    #[prost(string, optional, tag = "8")]
    pub subresource: Option<String>,
}

/// `meta/v1 FieldsV1`: Raw = 1 (the JSON of the field set).
#[derive(Clone, PartialEq, Message)]
pub struct FieldsV1 {
    #[prost(bytes = "vec", optional, tag = "1")]
    pub raw: Option<Vec<u8>>,
}

/// `meta/v1 DeleteOptions`: gracePeriodSeconds = 1, preconditions = 2, orphanDependents = 3,
/// propagationPolicy = 4, dryRun = 5.
#[derive(Clone, PartialEq, Message)]
pub struct DeleteOptions {
    #[prost(int64, optional, tag = "1")]
    pub grace_period_seconds: Option<i64>,
    #[prost(message, optional, tag = "2")]
    pub preconditions: Option<Preconditions>,
    #[prost(bool, optional, tag = "3")]
    pub orphan_dependents: Option<bool>,
    #[prost(string, optional, tag = "4")]
    pub propagation_policy: Option<String>,
    #[prost(string, repeated, tag = "5")]
    pub dry_run: Vec<String>,
}

/// `meta/v1 Preconditions`: uid = 1, resourceVersion = 2.
#[derive(Clone, PartialEq, Message)]
pub struct Preconditions {
    #[prost(string, optional, tag = "1")]
    pub uid: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub resource_version: Option<String>,
}

// k8s.io/api/core/v1/generated.proto

/// `core/v1 Namespace`: metadata = 1, spec = 2, status = 3.
#[derive(Clone, PartialEq, Message)]
pub struct Namespace {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
    #[prost(message, optional, tag = "2")]
    pub spec: Option<NamespaceSpec>,
    #[prost(message, optional, tag = "3")]
    pub status: Option<NamespaceStatus>,
}

/// `core/v1 ConfigMap`: metadata = 1, data = 2, binaryData = 3, immutable = 4.
#[derive(Clone, PartialEq, Message)]
pub struct ConfigMap {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
    #[prost(btree_map = "string, string", tag = "2")]
    pub data: BTreeMap<String, String>,
    #[prost(btree_map = "string, bytes", tag = "3")]
    pub binary_data: BTreeMap<String, Vec<u8>>,
    #[prost(bool, optional, tag = "4")]
    pub immutable: Option<bool>,
}

/// `core/v1 Secret`: metadata = 1, data = 2, type = 3, stringData = 4, immutable = 5.
#[derive(Clone, PartialEq, Message)]
pub struct Secret {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
    #[prost(btree_map = "string, bytes", tag = "2")]
    pub data: BTreeMap<String, Vec<u8>>,
    #[prost(string, optional, tag = "3")]
    pub r#type: Option<String>,
    #[prost(btree_map = "string, string", tag = "4")]
    pub string_data: BTreeMap<String, String>,
    #[prost(bool, optional, tag = "5")]
    pub immutable: Option<bool>,
}

/// `core/v1 ServiceAccount`: metadata = 1, secrets = 2, imagePullSecrets = 3,
/// automountServiceAccountToken = 4.
#[derive(Clone, PartialEq, Message)]
pub struct ServiceAccount {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
    #[prost(message, repeated, tag = "2")]
    pub secrets: Vec<ObjectReference>,
    #[prost(message, repeated, tag = "3")]
    pub image_pull_secrets: Vec<LocalObjectReference>,
    #[prost(bool, optional, tag = "4")]
    pub automount_service_account_token: Option<bool>,
}

/// `core/v1 ObjectReference`: kind = 1, namespace = 2, name = 3, uid = 4, apiVersion = 5,
/// resourceVersion = 6, fieldPath = 7.
#[derive(Clone, PartialEq, Message)]
pub struct ObjectReference {
    #[prost(string, optional, tag = "1")]
    pub kind: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub namespace: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub name: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub uid: Option<String>,
    #[prost(string, optional, tag = "5")]
    pub api_version: Option<String>,
    #[prost(string, optional, tag = "6")]
    pub resource_version: Option<String>,
    #[prost(string, optional, tag = "7")]
    pub field_path: Option<String>,
}

/// `core/v1 LocalObjectReference`: name = 1.
#[derive(Clone, PartialEq, Message)]
pub struct LocalObjectReference {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
}

// k8s.io/api/coordination/v1/generated.proto

/// `coordination/v1 Lease`: metadata = 1, spec = 2.
#[derive(Clone, PartialEq, Message)]
pub struct Lease {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
    #[prost(message, optional, tag = "2")]
    pub spec: Option<LeaseSpec>,
}

/// `coordination/v1 LeaseSpec`: holderIdentity = 1, leaseDurationSeconds = 2, acquireTime = 3,
/// renewTime = 4, leaseTransitions = 5, strategy = 6, preferredHolder = 7 (times are
/// `meta/v1 MicroTime`, shaped as Time).
#[derive(Clone, PartialEq, Message)]
pub struct LeaseSpec {
    #[prost(string, optional, tag = "1")]
    pub holder_identity: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub lease_duration_seconds: Option<i32>,
    #[prost(message, optional, tag = "3")]
    pub acquire_time: Option<Time>,
    #[prost(message, optional, tag = "4")]
    pub renew_time: Option<Time>,
    #[prost(int32, optional, tag = "5")]
    pub lease_transitions: Option<i32>,
    #[prost(string, optional, tag = "6")]
    pub strategy: Option<String>,
    #[prost(string, optional, tag = "7")]
    pub preferred_holder: Option<String>,
}

/// `core/v1 NamespaceSpec`: finalizers = 1.
#[derive(Clone, PartialEq, Message)]
pub struct NamespaceSpec {
    #[prost(string, repeated, tag = "1")]
    pub finalizers: Vec<String>,
}

/// `core/v1 NamespaceStatus`: phase = 1, conditions = 2.
#[derive(Clone, PartialEq, Message)]
pub struct NamespaceStatus {
    #[prost(string, optional, tag = "1")]
    pub phase: Option<String>,
    #[prost(message, repeated, tag = "2")]
    pub conditions: Vec<NamespaceCondition>,
}

/// `core/v1 NamespaceCondition`: type = 1, status = 2, lastTransitionTime = 4, reason = 5,
/// message = 6.
#[derive(Clone, PartialEq, Message)]
pub struct NamespaceCondition {
    #[prost(string, optional, tag = "1")]
    pub r#type: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub status: Option<String>,
    #[prost(message, optional, tag = "4")]
    pub last_transition_time: Option<Time>,
    #[prost(string, optional, tag = "5")]
    pub reason: Option<String>,
    #[prost(string, optional, tag = "6")]
    pub message: Option<String>,
}

/// `core/v1 Service`: metadata = 1, spec = 2, status = 3.
#[derive(Clone, PartialEq, Message)]
pub struct Service {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
    #[prost(message, optional, tag = "2")]
    pub spec: Option<ServiceSpec>,
    #[prost(message, optional, tag = "3")]
    pub status: Option<ServiceStatus>,
}

/// `core/v1 ServiceSpec`: ports = 1, selector = 2, clusterIP = 3, type = 4, externalIPs = 5,
/// sessionAffinity = 7, loadBalancerIP = 8, loadBalancerSourceRanges = 9, externalName = 10,
/// externalTrafficPolicy = 11, healthCheckNodePort = 12, publishNotReadyAddresses = 13,
/// sessionAffinityConfig = 14, ipFamilyPolicy = 17, clusterIPs = 18, ipFamilies = 19,
/// allocateLoadBalancerNodePorts = 20, loadBalancerClass = 21, internalTrafficPolicy = 22,
/// trafficDistribution = 23 (15 topologyKeys and 16 ipFamily are gone).
#[derive(Clone, PartialEq, Message)]
pub struct ServiceSpec {
    #[prost(message, repeated, tag = "1")]
    pub ports: Vec<ServicePort>,
    #[prost(btree_map = "string, string", tag = "2")]
    pub selector: BTreeMap<String, String>,
    #[prost(string, optional, tag = "3")]
    pub cluster_ip: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub r#type: Option<String>,
    #[prost(string, repeated, tag = "5")]
    pub external_ips: Vec<String>,
    #[prost(string, optional, tag = "7")]
    pub session_affinity: Option<String>,
    #[prost(string, optional, tag = "8")]
    pub load_balancer_ip: Option<String>,
    #[prost(string, repeated, tag = "9")]
    pub load_balancer_source_ranges: Vec<String>,
    #[prost(string, optional, tag = "10")]
    pub external_name: Option<String>,
    #[prost(string, optional, tag = "11")]
    pub external_traffic_policy: Option<String>,
    #[prost(int32, optional, tag = "12")]
    pub health_check_node_port: Option<i32>,
    #[prost(bool, optional, tag = "13")]
    pub publish_not_ready_addresses: Option<bool>,
    #[prost(message, optional, tag = "14")]
    pub session_affinity_config: Option<SessionAffinityConfig>,
    #[prost(string, optional, tag = "17")]
    pub ip_family_policy: Option<String>,
    #[prost(string, repeated, tag = "18")]
    pub cluster_ips: Vec<String>,
    #[prost(string, repeated, tag = "19")]
    pub ip_families: Vec<String>,
    #[prost(bool, optional, tag = "20")]
    pub allocate_load_balancer_node_ports: Option<bool>,
    #[prost(string, optional, tag = "21")]
    pub load_balancer_class: Option<String>,
    #[prost(string, optional, tag = "22")]
    pub internal_traffic_policy: Option<String>,
    #[prost(string, optional, tag = "23")]
    pub traffic_distribution: Option<String>,
}

/// `core/v1 ServicePort`: name = 1, protocol = 2, port = 3, targetPort = 4, nodePort = 5,
/// appProtocol = 6.
#[derive(Clone, PartialEq, Message)]
pub struct ServicePort {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub protocol: Option<String>,
    #[prost(int32, optional, tag = "3")]
    pub port: Option<i32>,
    #[prost(message, optional, tag = "4")]
    pub target_port: Option<IntOrString>,
    #[prost(int32, optional, tag = "5")]
    pub node_port: Option<i32>,
    #[prost(string, optional, tag = "6")]
    pub app_protocol: Option<String>,
}

/// `util/intstr IntOrString`: type = 1 (0 int, 1 string), intVal = 2, strVal = 3.
#[derive(Clone, PartialEq, Message)]
pub struct IntOrString {
    #[prost(int64, optional, tag = "1")]
    pub r#type: Option<i64>,
    #[prost(int32, optional, tag = "2")]
    pub int_val: Option<i32>,
    #[prost(string, optional, tag = "3")]
    pub str_val: Option<String>,
}

/// `core/v1 SessionAffinityConfig`: clientIP = 1.
#[derive(Clone, PartialEq, Message)]
pub struct SessionAffinityConfig {
    #[prost(message, optional, tag = "1")]
    pub client_ip: Option<ClientIpConfig>,
}

/// `core/v1 ClientIPConfig`: timeoutSeconds = 1.
#[derive(Clone, PartialEq, Message)]
pub struct ClientIpConfig {
    #[prost(int32, optional, tag = "1")]
    pub timeout_seconds: Option<i32>,
}

/// `core/v1 ServiceStatus`: loadBalancer = 1, conditions = 2.
#[derive(Clone, PartialEq, Message)]
pub struct ServiceStatus {
    #[prost(message, optional, tag = "1")]
    pub load_balancer: Option<LoadBalancerStatus>,
    #[prost(message, repeated, tag = "2")]
    pub conditions: Vec<Condition>,
}

/// `core/v1 LoadBalancerStatus`: ingress = 1.
#[derive(Clone, PartialEq, Message)]
pub struct LoadBalancerStatus {
    #[prost(message, repeated, tag = "1")]
    pub ingress: Vec<LoadBalancerIngress>,
}

/// `core/v1 LoadBalancerIngress`: ip = 1, hostname = 2, ipMode = 3, ports = 4.
#[derive(Clone, PartialEq, Message)]
pub struct LoadBalancerIngress {
    #[prost(string, optional, tag = "1")]
    pub ip: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub hostname: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub ip_mode: Option<String>,
    #[prost(message, repeated, tag = "4")]
    pub ports: Vec<PortStatus>,
}

/// `core/v1 PortStatus`: port = 1, protocol = 2, error = 3.
#[derive(Clone, PartialEq, Message)]
pub struct PortStatus {
    #[prost(int32, optional, tag = "1")]
    pub port: Option<i32>,
    #[prost(string, optional, tag = "2")]
    pub protocol: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub error: Option<String>,
}

/// `meta/v1 Condition`: type = 1, status = 2, observedGeneration = 3, lastTransitionTime = 4,
/// reason = 5, message = 6.
#[derive(Clone, PartialEq, Message)]
pub struct Condition {
    #[prost(string, optional, tag = "1")]
    pub r#type: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub status: Option<String>,
    #[prost(int64, optional, tag = "3")]
    pub observed_generation: Option<i64>,
    #[prost(message, optional, tag = "4")]
    pub last_transition_time: Option<Time>,
    #[prost(string, optional, tag = "5")]
    pub reason: Option<String>,
    #[prost(string, optional, tag = "6")]
    pub message: Option<String>,
}

/// `core/v1 Endpoints`: metadata = 1, subsets = 2.
#[derive(Clone, PartialEq, Message)]
pub struct Endpoints {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
    #[prost(message, repeated, tag = "2")]
    pub subsets: Vec<EndpointSubset>,
}

/// `core/v1 EndpointSubset`: addresses = 1, notReadyAddresses = 2, ports = 3.
#[derive(Clone, PartialEq, Message)]
pub struct EndpointSubset {
    #[prost(message, repeated, tag = "1")]
    pub addresses: Vec<EndpointAddress>,
    #[prost(message, repeated, tag = "2")]
    pub not_ready_addresses: Vec<EndpointAddress>,
    #[prost(message, repeated, tag = "3")]
    pub ports: Vec<CoreEndpointPort>,
}

/// `core/v1 EndpointAddress`: ip = 1, targetRef = 2, hostname = 3, nodeName = 4.
#[derive(Clone, PartialEq, Message)]
pub struct EndpointAddress {
    #[prost(string, optional, tag = "1")]
    pub ip: Option<String>,
    #[prost(message, optional, tag = "2")]
    pub target_ref: Option<ObjectReference>,
    #[prost(string, optional, tag = "3")]
    pub hostname: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub node_name: Option<String>,
}

/// `core/v1 EndpointPort`: name = 1, port = 2, protocol = 3, appProtocol = 4.
#[derive(Clone, PartialEq, Message)]
pub struct CoreEndpointPort {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub port: Option<i32>,
    #[prost(string, optional, tag = "3")]
    pub protocol: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub app_protocol: Option<String>,
}

// k8s.io/api/discovery/v1/generated.proto

/// `discovery/v1 EndpointSlice`: metadata = 1, endpoints = 2, ports = 3, addressType = 4.
#[derive(Clone, PartialEq, Message)]
pub struct EndpointSlice {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
    #[prost(message, repeated, tag = "2")]
    pub endpoints: Vec<Endpoint>,
    #[prost(message, repeated, tag = "3")]
    pub ports: Vec<DiscoveryEndpointPort>,
    #[prost(string, optional, tag = "4")]
    pub address_type: Option<String>,
}

/// `discovery/v1 Endpoint`: addresses = 1, conditions = 2, hostname = 3, targetRef = 4,
/// deprecatedTopology = 5, nodeName = 6, zone = 7, hints = 8.
#[derive(Clone, PartialEq, Message)]
pub struct Endpoint {
    #[prost(string, repeated, tag = "1")]
    pub addresses: Vec<String>,
    #[prost(message, optional, tag = "2")]
    pub conditions: Option<EndpointConditions>,
    #[prost(string, optional, tag = "3")]
    pub hostname: Option<String>,
    #[prost(message, optional, tag = "4")]
    pub target_ref: Option<ObjectReference>,
    #[prost(btree_map = "string, string", tag = "5")]
    pub deprecated_topology: BTreeMap<String, String>,
    #[prost(string, optional, tag = "6")]
    pub node_name: Option<String>,
    #[prost(string, optional, tag = "7")]
    pub zone: Option<String>,
    #[prost(message, optional, tag = "8")]
    pub hints: Option<EndpointHints>,
}

/// `discovery/v1 EndpointConditions`: ready = 1, serving = 2, terminating = 3.
#[derive(Clone, PartialEq, Message)]
pub struct EndpointConditions {
    #[prost(bool, optional, tag = "1")]
    pub ready: Option<bool>,
    #[prost(bool, optional, tag = "2")]
    pub serving: Option<bool>,
    #[prost(bool, optional, tag = "3")]
    pub terminating: Option<bool>,
}

/// `discovery/v1 EndpointHints`: forZones = 1 (ForZone: name = 1).
#[derive(Clone, PartialEq, Message)]
pub struct EndpointHints {
    #[prost(message, repeated, tag = "1")]
    pub for_zones: Vec<ForZone>,
}

/// `discovery/v1 ForZone`: name = 1.
#[derive(Clone, PartialEq, Message)]
pub struct ForZone {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
}

/// `discovery/v1 EndpointPort`: name = 1, protocol = 2, port = 3, appProtocol = 4.
#[derive(Clone, PartialEq, Message)]
pub struct DiscoveryEndpointPort {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub protocol: Option<String>,
    #[prost(int32, optional, tag = "3")]
    pub port: Option<i32>,
    #[prost(string, optional, tag = "4")]
    pub app_protocol: Option<String>,
}

/// The scheme built-in kinds decode with, as kube-apiserver's errors name it.
const LEGACY_SCHEME: &str = "pkg/api/legacyscheme/scheme.go:30";

// k8s.io/api/core/v1 and k8s.io/api/events/v1 generated.proto: Events

/// `core/v1 EventSource`: component = 1, host = 2.
#[derive(Clone, PartialEq, Message)]
pub struct EventSource {
    #[prost(string, optional, tag = "1")]
    pub component: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub host: Option<String>,
}

/// `core/v1 EventSeries` and `events/v1 EventSeries`: count = 1, lastObservedTime = 2
/// (a MicroTime: the same message as Time).
#[derive(Clone, PartialEq, Message)]
pub struct EventSeries {
    #[prost(int32, optional, tag = "1")]
    pub count: Option<i32>,
    #[prost(message, optional, tag = "2")]
    pub last_observed_time: Option<Time>,
}

/// `core/v1 Event`: metadata = 1, involvedObject = 2, reason = 3, message = 4, source = 5,
/// firstTimestamp = 6, lastTimestamp = 7, count = 8, type = 9, eventTime = 10, series = 11,
/// action = 12, related = 13, reportingComponent = 14, reportingInstance = 15.
#[derive(Clone, PartialEq, Message)]
pub struct CoreEvent {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
    #[prost(message, optional, tag = "2")]
    pub involved_object: Option<ObjectReference>,
    #[prost(string, optional, tag = "3")]
    pub reason: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub message: Option<String>,
    #[prost(message, optional, tag = "5")]
    pub source: Option<EventSource>,
    #[prost(message, optional, tag = "6")]
    pub first_timestamp: Option<Time>,
    #[prost(message, optional, tag = "7")]
    pub last_timestamp: Option<Time>,
    #[prost(int32, optional, tag = "8")]
    pub count: Option<i32>,
    #[prost(string, optional, tag = "9")]
    pub r#type: Option<String>,
    #[prost(message, optional, tag = "10")]
    pub event_time: Option<Time>,
    #[prost(message, optional, tag = "11")]
    pub series: Option<EventSeries>,
    #[prost(string, optional, tag = "12")]
    pub action: Option<String>,
    #[prost(message, optional, tag = "13")]
    pub related: Option<ObjectReference>,
    #[prost(string, optional, tag = "14")]
    pub reporting_component: Option<String>,
    #[prost(string, optional, tag = "15")]
    pub reporting_instance: Option<String>,
}

/// `events/v1 Event`: metadata = 1, eventTime = 2, series = 3, reportingController = 4,
/// reportingInstance = 5, action = 6, reason = 7, regarding = 8, related = 9, note = 10,
/// type = 11, deprecatedSource = 12, deprecatedFirstTimestamp = 13,
/// deprecatedLastTimestamp = 14, deprecatedCount = 15.
#[derive(Clone, PartialEq, Message)]
pub struct EventsV1Event {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
    #[prost(message, optional, tag = "2")]
    pub event_time: Option<Time>,
    #[prost(message, optional, tag = "3")]
    pub series: Option<EventSeries>,
    #[prost(string, optional, tag = "4")]
    pub reporting_controller: Option<String>,
    #[prost(string, optional, tag = "5")]
    pub reporting_instance: Option<String>,
    #[prost(string, optional, tag = "6")]
    pub action: Option<String>,
    #[prost(string, optional, tag = "7")]
    pub reason: Option<String>,
    #[prost(message, optional, tag = "8")]
    pub regarding: Option<ObjectReference>,
    #[prost(message, optional, tag = "9")]
    pub related: Option<ObjectReference>,
    #[prost(string, optional, tag = "10")]
    pub note: Option<String>,
    #[prost(string, optional, tag = "11")]
    pub r#type: Option<String>,
    #[prost(message, optional, tag = "12")]
    pub deprecated_source: Option<EventSource>,
    #[prost(message, optional, tag = "13")]
    pub deprecated_first_timestamp: Option<Time>,
    #[prost(message, optional, tag = "14")]
    pub deprecated_last_timestamp: Option<Time>,
    #[prost(int32, optional, tag = "15")]
    pub deprecated_count: Option<i32>,
}

/// gogo-protobuf's wording for the common failures (a cut-off body is `unexpected EOF`).
fn go_error(e: &prost::DecodeError) -> String {
    let text = e.to_string();
    let what = text.rsplit(": ").next().unwrap_or(&text);
    match what {
        "buffer underflow" | "delimited length exceeded" | "invalid varint" => {
            "unexpected EOF".into()
        }
        other => format!("proto: {other}"),
    }
}

/// Unwraps the envelope (`protobuf.Serializer.Decode`): returns the envelope's type and `raw`.
fn envelope(body: &[u8]) -> Result<(TypeMeta, Vec<u8>), String> {
    if body.is_empty() {
        return Err("empty data".into());
    }
    let Some(rest) = body.strip_prefix(&MAGIC) else {
        // Go's `%v` of a byte slice.
        return Err(
            "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
                .into(),
        );
    };
    if rest.is_empty() {
        return Err("empty body".into());
    }
    let unknown = Unknown::decode(rest).map_err(|e| go_error(&e))?;
    Ok((
        unknown.type_meta.unwrap_or_default(),
        unknown.raw.unwrap_or_default(),
    ))
}

/// `summarizeData`: the first 30 bytes of a body, in hex unless it looks like JSON.
/// Upstream's `summarizeData(body, 30)`: the start of a body for a decode error (JSON as text,
/// anything else in hex).
pub fn summarize(body: &[u8]) -> String {
    const MAX: usize = 30;
    if body.is_empty() {
        return "<empty>".into();
    }
    let cut = &body[..body.len().min(MAX)];
    let mut s = if body[0] == b'{' {
        String::from_utf8_lossy(cut).into_owned()
    } else {
        cut.iter().map(|b| format!("{b:02x}")).collect()
    };
    if body.len() > MAX {
        s.push_str(" ...");
    }
    s
}

/// Splits `group/version` (or a bare core `version`).
fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.split_once('/').unwrap_or(("", api_version))
}

/// Decodes a built-in object (a create or update body) for the endpoint of `group`/`version`
/// `kind`, with kube-apiserver's 400s (`transformDecodeError`). The envelope's kind and
/// version default to the endpoint's, as upstream's `copyKindDefaults`.
pub fn decode_object(
    body: &[u8],
    group: &str,
    version: &str,
    kind: &str,
) -> Result<Value, ApiError> {
    // Only the kinds clients send as protobuf are decoded; the rest answer as unsupported.
    let decodable = matches!(
        (group, kind),
        (
            "",
            "Namespace"
                | "ConfigMap"
                | "Secret"
                | "ServiceAccount"
                | "Service"
                | "Endpoints"
                | "Event"
        ) | ("discovery.k8s.io", "EndpointSlice")
            | ("coordination.k8s.io", "Lease")
            | ("events.k8s.io", "Event")
    );
    if !decodable {
        return Err(unsupported_for_kind());
    }
    let (tm, raw) = envelope(body).map_err(|e| {
        ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {kind}): {e} ({})",
            summarize(body)
        ))
    })?;
    let mut actual_kind = tm.kind.unwrap_or_default();
    if actual_kind.is_empty() {
        actual_kind = kind.to_string();
    }
    let api_version = tm.api_version.unwrap_or_default();
    let (mut g, mut v) = split_api_version(&api_version);
    if v.is_empty() {
        (g, v) = (group, version);
    }
    let cannot = |why: String| {
        ApiError::bad_request(format!(
            "{actual_kind} in version {v:?} cannot be handled as a {kind}: {why}"
        ))
    };
    if (g, v, actual_kind.as_str()) != (group, version, kind) {
        return Err(cannot(format!(
            "no kind {actual_kind:?} is registered for version {:?} in scheme {LEGACY_SCHEME:?}",
            if g.is_empty() {
                v.to_string()
            } else {
                format!("{g}/{v}")
            }
        )));
    }
    let api_version = if g.is_empty() {
        v.to_string()
    } else {
        format!("{g}/{v}")
    };
    if kind == "Event" && group.is_empty() {
        let e = CoreEvent::decode(raw.as_slice()).map_err(|e| cannot(go_error(&e)))?;
        return core_event_json(&e, &api_version).map_err(cannot);
    }
    if kind == "Event" {
        let e = EventsV1Event::decode(raw.as_slice()).map_err(|e| cannot(go_error(&e)))?;
        return events_v1_event_json(&e, &api_version).map_err(cannot);
    }
    if kind == "Lease" {
        let l = Lease::decode(raw.as_slice()).map_err(|e| cannot(go_error(&e)))?;
        return lease_json(&l, &api_version).map_err(cannot);
    }
    if kind == "ConfigMap" {
        let cm = ConfigMap::decode(raw.as_slice()).map_err(|e| cannot(go_error(&e)))?;
        return config_map_json(&cm, &api_version).map_err(cannot);
    }
    if kind == "Secret" {
        let secret = Secret::decode(raw.as_slice()).map_err(|e| cannot(go_error(&e)))?;
        return secret_json(&secret, &api_version).map_err(cannot);
    }
    if kind == "ServiceAccount" {
        let sa = ServiceAccount::decode(raw.as_slice()).map_err(|e| cannot(go_error(&e)))?;
        return service_account_json(&sa, &api_version).map_err(cannot);
    }
    if kind == "Endpoints" {
        let e = Endpoints::decode(raw.as_slice()).map_err(|e| cannot(go_error(&e)))?;
        return endpoints_json(&e, &api_version).map_err(cannot);
    }
    if kind == "EndpointSlice" {
        let e = EndpointSlice::decode(raw.as_slice()).map_err(|e| cannot(go_error(&e)))?;
        return endpoint_slice_json(&e, &api_version).map_err(cannot);
    }
    if kind == "Service" {
        let svc = Service::decode(raw.as_slice()).map_err(|e| cannot(go_error(&e)))?;
        return service_json(&svc, &api_version).map_err(cannot);
    }
    let ns = Namespace::decode(raw.as_slice()).map_err(|e| cannot(go_error(&e)))?;
    namespace_json(&ns, &api_version).map_err(cannot)
}

/// A ConfigMap as Go's JSON encoding of the decoded struct (`data` and `binaryData` omitted when
/// empty, binary values in base64, `immutable` when sent).
fn config_map_json(cm: &ConfigMap, api_version: &str) -> Result<Value, String> {
    use base64::Engine;
    let mut o = Map::new();
    o.insert("kind".into(), "ConfigMap".into());
    o.insert("apiVersion".into(), api_version.into());
    o.insert(
        "metadata".into(),
        object_meta_json(&cm.metadata.clone().unwrap_or_default())?,
    );
    if !cm.data.is_empty() {
        o.insert("data".into(), json!(cm.data));
    }
    if !cm.binary_data.is_empty() {
        let b64 = base64::engine::general_purpose::STANDARD;
        let m: Map<String, Value> = cm
            .binary_data
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(b64.encode(v))))
            .collect();
        o.insert("binaryData".into(), m.into());
    }
    if let Some(i) = cm.immutable {
        o.insert("immutable".into(), i.into());
    }
    Ok(o.into())
}

/// A Secret as Go's JSON encoding of the decoded struct (`data` in base64; `data`,
/// `stringData` and `type` omitted when empty, `immutable` when sent).
fn secret_json(s: &Secret, api_version: &str) -> Result<Value, String> {
    use base64::Engine;
    let mut o = Map::new();
    o.insert("kind".into(), "Secret".into());
    o.insert("apiVersion".into(), api_version.into());
    o.insert(
        "metadata".into(),
        object_meta_json(&s.metadata.clone().unwrap_or_default())?,
    );
    if let Some(i) = s.immutable {
        o.insert("immutable".into(), i.into());
    }
    if !s.data.is_empty() {
        let b64 = base64::engine::general_purpose::STANDARD;
        let m: Map<String, Value> = s
            .data
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(b64.encode(v))))
            .collect();
        o.insert("data".into(), m.into());
    }
    if !s.string_data.is_empty() {
        o.insert("stringData".into(), json!(s.string_data));
    }
    put_str(&mut o, "type", s.r#type.as_deref());
    Ok(o.into())
}

/// A ServiceAccount as Go's JSON encoding of the decoded struct (the reference lists omitted
/// when empty, their string fields when empty; `automountServiceAccountToken` when sent).
fn service_account_json(sa: &ServiceAccount, api_version: &str) -> Result<Value, String> {
    let mut o = Map::new();
    o.insert("kind".into(), "ServiceAccount".into());
    o.insert("apiVersion".into(), api_version.into());
    o.insert(
        "metadata".into(),
        object_meta_json(&sa.metadata.clone().unwrap_or_default())?,
    );
    if !sa.secrets.is_empty() {
        let refs = sa.secrets.iter().map(object_reference_json);
        o.insert("secrets".into(), refs.collect());
    }
    if !sa.image_pull_secrets.is_empty() {
        let refs = sa.image_pull_secrets.iter().map(|r| {
            let mut x = Map::new();
            put_str(&mut x, "name", r.name.as_deref());
            Value::Object(x)
        });
        o.insert("imagePullSecrets".into(), refs.collect());
    }
    if let Some(a) = sa.automount_service_account_token {
        o.insert("automountServiceAccountToken".into(), a.into());
    }
    Ok(o.into())
}

/// A Lease as Go's JSON encoding of the decoded struct (`spec` always present; its pointer
/// fields when sent; MicroTimes in UTC with six fractional digits).
fn lease_json(l: &Lease, api_version: &str) -> Result<Value, String> {
    let mut o = Map::new();
    o.insert("kind".into(), "Lease".into());
    o.insert("apiVersion".into(), api_version.into());
    o.insert(
        "metadata".into(),
        object_meta_json(&l.metadata.clone().unwrap_or_default())?,
    );
    let spec = l.spec.clone().unwrap_or_default();
    let mut sp = Map::new();
    if let Some(h) = spec.holder_identity {
        sp.insert("holderIdentity".into(), h.into());
    }
    if let Some(d) = spec.lease_duration_seconds {
        sp.insert("leaseDurationSeconds".into(), d.into());
    }
    if let Some(t) = &spec.acquire_time {
        sp.insert("acquireTime".into(), micro_time_json(t)?);
    }
    if let Some(t) = &spec.renew_time {
        sp.insert("renewTime".into(), micro_time_json(t)?);
    }
    if let Some(n) = spec.lease_transitions {
        sp.insert("leaseTransitions".into(), n.into());
    }
    if let Some(st) = spec.strategy {
        sp.insert("strategy".into(), st.into());
    }
    if let Some(p) = spec.preferred_holder {
        sp.insert("preferredHolder".into(), p.into());
    }
    o.insert("spec".into(), sp.into());
    Ok(o.into())
}

/// `metav1.MicroTime` as JSON: RFC3339Micro in UTC; Go's zero time (empty message) is null.
fn micro_time_json(t: &Time) -> Result<Value, String> {
    if t.seconds.is_none() && t.nanos.is_none() {
        return Ok(Value::Null);
    }
    let (secs, nanos) = (t.seconds.unwrap_or(0), t.nanos.unwrap_or(0));
    let dt = u32::try_from(nanos)
        .ok()
        .and_then(|n| chrono::DateTime::from_timestamp(secs, n))
        .ok_or_else(|| format!("MicroTime out of range: seconds {secs}, nanos {nanos}"))?;
    Ok(dt.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string().into())
}

fn event_source_json(s: &EventSource) -> Value {
    let mut o = Map::new();
    put_str(&mut o, "component", s.component.as_deref());
    put_str(&mut o, "host", s.host.as_deref());
    o.into()
}

fn series_json(s: &EventSeries) -> Result<Value, String> {
    let last = s
        .last_observed_time
        .as_ref()
        .map(micro_time_json)
        .transpose()?
        .unwrap_or(Value::Null);
    Ok(json!({"count": s.count.unwrap_or(0), "lastObservedTime": last}))
}

fn opt_time(
    o: &mut Map<String, Value>,
    key: &str,
    t: Option<&Time>,
    f: fn(&Time) -> Result<Value, String>,
) -> Result<(), String> {
    if let Some(t) = t {
        o.insert(key.into(), f(t)?);
    }
    Ok(())
}

/// A core/v1 Event as the JSON of the decoded struct (the Event strategy writes Go's zero
/// values the JSON encoding adds).
fn core_event_json(e: &CoreEvent, api_version: &str) -> Result<Value, String> {
    let mut o = Map::new();
    o.insert("kind".into(), "Event".into());
    o.insert("apiVersion".into(), api_version.into());
    o.insert(
        "metadata".into(),
        object_meta_json(&e.metadata.clone().unwrap_or_default())?,
    );
    if let Some(r) = &e.involved_object {
        o.insert("involvedObject".into(), object_reference_json(r));
    }
    put_str(&mut o, "reason", e.reason.as_deref());
    put_str(&mut o, "message", e.message.as_deref());
    if let Some(src) = &e.source {
        o.insert("source".into(), event_source_json(src));
    }
    opt_time(
        &mut o,
        "firstTimestamp",
        e.first_timestamp.as_ref(),
        time_json,
    )?;
    opt_time(
        &mut o,
        "lastTimestamp",
        e.last_timestamp.as_ref(),
        time_json,
    )?;
    if let Some(c) = e.count.filter(|c| *c != 0) {
        o.insert("count".into(), c.into());
    }
    put_str(&mut o, "type", e.r#type.as_deref());
    opt_time(&mut o, "eventTime", e.event_time.as_ref(), micro_time_json)?;
    if let Some(s) = &e.series {
        o.insert("series".into(), series_json(s)?);
    }
    put_str(&mut o, "action", e.action.as_deref());
    if let Some(r) = &e.related {
        o.insert("related".into(), object_reference_json(r));
    }
    put_str(
        &mut o,
        "reportingComponent",
        e.reporting_component.as_deref(),
    );
    put_str(&mut o, "reportingInstance", e.reporting_instance.as_deref());
    Ok(o.into())
}

/// An events.k8s.io/v1 Event as the JSON of the decoded struct.
fn events_v1_event_json(e: &EventsV1Event, api_version: &str) -> Result<Value, String> {
    let mut o = Map::new();
    o.insert("kind".into(), "Event".into());
    o.insert("apiVersion".into(), api_version.into());
    o.insert(
        "metadata".into(),
        object_meta_json(&e.metadata.clone().unwrap_or_default())?,
    );
    opt_time(&mut o, "eventTime", e.event_time.as_ref(), micro_time_json)?;
    if let Some(s) = &e.series {
        o.insert("series".into(), series_json(s)?);
    }
    put_str(
        &mut o,
        "reportingController",
        e.reporting_controller.as_deref(),
    );
    put_str(&mut o, "reportingInstance", e.reporting_instance.as_deref());
    put_str(&mut o, "action", e.action.as_deref());
    put_str(&mut o, "reason", e.reason.as_deref());
    if let Some(r) = &e.regarding {
        o.insert("regarding".into(), object_reference_json(r));
    }
    if let Some(r) = &e.related {
        o.insert("related".into(), object_reference_json(r));
    }
    put_str(&mut o, "note", e.note.as_deref());
    put_str(&mut o, "type", e.r#type.as_deref());
    if let Some(src) = &e.deprecated_source {
        o.insert("deprecatedSource".into(), event_source_json(src));
    }
    opt_time(
        &mut o,
        "deprecatedFirstTimestamp",
        e.deprecated_first_timestamp.as_ref(),
        time_json,
    )?;
    opt_time(
        &mut o,
        "deprecatedLastTimestamp",
        e.deprecated_last_timestamp.as_ref(),
        time_json,
    )?;
    if let Some(c) = e.deprecated_count.filter(|c| *c != 0) {
        o.insert("deprecatedCount".into(), c.into());
    }
    Ok(o.into())
}

/// 415 for a resource Crest takes only as JSON or YAML (custom resources, as upstream; CRDs).
pub fn unsupported_for_kind() -> ApiError {
    ApiError::unsupported_media_type(
        "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml",
    )
}

/// Decodes a DeleteOptions body into the JSON `request::DeleteOptions` reads (pointer fields
/// present when sent). Errors are the decoder's bare message, as for JSON bodies.
pub fn decode_delete_options(body: &[u8]) -> Result<Value, ApiError> {
    let (tm, raw) = envelope(body).map_err(ApiError::bad_request)?;
    let o =
        DeleteOptions::decode(raw.as_slice()).map_err(|e| ApiError::bad_request(go_error(&e)))?;
    let mut m = Map::new();
    put_str(&mut m, "kind", tm.kind.as_deref());
    put_str(&mut m, "apiVersion", tm.api_version.as_deref());
    if let Some(g) = o.grace_period_seconds {
        m.insert("gracePeriodSeconds".into(), g.into());
    }
    if let Some(p) = &o.preconditions {
        let mut pm = Map::new();
        if let Some(uid) = &p.uid {
            pm.insert("uid".into(), uid.as_str().into());
        }
        if let Some(rv) = &p.resource_version {
            pm.insert("resourceVersion".into(), rv.as_str().into());
        }
        m.insert("preconditions".into(), pm.into());
    }
    if let Some(b) = o.orphan_dependents {
        m.insert("orphanDependents".into(), b.into());
    }
    if let Some(p) = &o.propagation_policy {
        m.insert("propagationPolicy".into(), p.as_str().into());
    }
    if !o.dry_run.is_empty() {
        m.insert("dryRun".into(), o.dry_run.clone().into());
    }
    Ok(m.into())
}

/// Inserts a Go `string` field with `omitempty`: absent when empty.
fn put_str(m: &mut Map<String, Value>, key: &str, v: Option<&str>) {
    if let Some(s) = v.filter(|s| !s.is_empty()) {
        m.insert(key.into(), s.into());
    }
}

/// `metav1.Time` as JSON: RFC 3339 in UTC to the second; Go's zero time (empty message) is null.
fn time_json(t: &Time) -> Result<Value, String> {
    if t.seconds.is_none() && t.nanos.is_none() {
        return Ok(Value::Null);
    }
    let (secs, nanos) = (t.seconds.unwrap_or(0), t.nanos.unwrap_or(0));
    let dt = u32::try_from(nanos)
        .ok()
        .and_then(|n| chrono::DateTime::from_timestamp(secs, n))
        .ok_or_else(|| format!("Time out of range: seconds {secs}, nanos {nanos}"))?;
    Ok(dt.format("%Y-%m-%dT%H:%M:%SZ").to_string().into())
}

fn object_meta_json(m: &ObjectMeta) -> Result<Value, String> {
    let mut o = Map::new();
    put_str(&mut o, "name", m.name.as_deref());
    put_str(&mut o, "generateName", m.generate_name.as_deref());
    put_str(&mut o, "namespace", m.namespace.as_deref());
    put_str(&mut o, "selfLink", m.self_link.as_deref());
    put_str(&mut o, "uid", m.uid.as_deref());
    put_str(&mut o, "resourceVersion", m.resource_version.as_deref());
    if let Some(g) = m.generation.filter(|g| *g != 0) {
        o.insert("generation".into(), g.into());
    }
    // A struct, not a pointer, in Go: always encoded, null when zero.
    let created = match &m.creation_timestamp {
        Some(t) => time_json(t)?,
        None => Value::Null,
    };
    o.insert("creationTimestamp".into(), created);
    if let Some(t) = &m.deletion_timestamp {
        o.insert("deletionTimestamp".into(), time_json(t)?);
    }
    if let Some(s) = m.deletion_grace_period_seconds {
        o.insert("deletionGracePeriodSeconds".into(), s.into());
    }
    if !m.labels.is_empty() {
        o.insert("labels".into(), json!(m.labels));
    }
    if !m.annotations.is_empty() {
        o.insert("annotations".into(), json!(m.annotations));
    }
    if !m.owner_references.is_empty() {
        let refs = m.owner_references.iter().map(|r| {
            // apiVersion, kind, name and uid have no omitempty.
            let mut x = Map::new();
            x.insert(
                "apiVersion".into(),
                r.api_version.as_deref().unwrap_or("").into(),
            );
            x.insert("kind".into(), r.kind.as_deref().unwrap_or("").into());
            x.insert("name".into(), r.name.as_deref().unwrap_or("").into());
            x.insert("uid".into(), r.uid.as_deref().unwrap_or("").into());
            if let Some(c) = r.controller {
                x.insert("controller".into(), c.into());
            }
            if let Some(b) = r.block_owner_deletion {
                x.insert("blockOwnerDeletion".into(), b.into());
            }
            Value::Object(x)
        });
        o.insert("ownerReferences".into(), refs.collect());
    }
    if !m.finalizers.is_empty() {
        o.insert("finalizers".into(), m.finalizers.clone().into());
    }
    if !m.managed_fields.is_empty() {
        let mut entries = Vec::with_capacity(m.managed_fields.len());
        for e in &m.managed_fields {
            let mut x = Map::new();
            put_str(&mut x, "manager", e.manager.as_deref());
            put_str(&mut x, "operation", e.operation.as_deref());
            put_str(&mut x, "apiVersion", e.api_version.as_deref());
            if let Some(t) = &e.time {
                x.insert("time".into(), time_json(t)?);
            }
            put_str(&mut x, "fieldsType", e.fields_type.as_deref());
            if let Some(f) = &e.fields_v1 {
                // FieldsV1 marshals as its raw JSON (null when unset).
                let v = match f.raw.as_deref() {
                    None => Value::Null,
                    Some(raw) => serde_json::from_slice(raw)
                        .map_err(|e| format!("invalid FieldsV1 JSON: {e}"))?,
                };
                x.insert("fieldsV1".into(), v);
            }
            put_str(&mut x, "subresource", e.subresource.as_deref());
            entries.push(Value::Object(x));
        }
        o.insert("managedFields".into(), entries.into());
    }
    Ok(o.into())
}

/// A Namespace as Go's JSON encoding of the decoded struct (`spec` and `status` always present).
fn namespace_json(ns: &Namespace, api_version: &str) -> Result<Value, String> {
    let meta = object_meta_json(&ns.metadata.clone().unwrap_or_default())?;
    let mut spec = Map::new();
    if let Some(s) = ns.spec.as_ref().filter(|s| !s.finalizers.is_empty()) {
        spec.insert("finalizers".into(), s.finalizers.clone().into());
    }
    let mut status = Map::new();
    if let Some(s) = &ns.status {
        put_str(&mut status, "phase", s.phase.as_deref());
        if !s.conditions.is_empty() {
            let mut conds = Vec::with_capacity(s.conditions.len());
            for c in &s.conditions {
                let mut x = Map::new();
                x.insert("type".into(), c.r#type.as_deref().unwrap_or("").into());
                x.insert("status".into(), c.status.as_deref().unwrap_or("").into());
                let t = match &c.last_transition_time {
                    Some(t) => time_json(t)?,
                    None => Value::Null,
                };
                x.insert("lastTransitionTime".into(), t);
                put_str(&mut x, "reason", c.reason.as_deref());
                put_str(&mut x, "message", c.message.as_deref());
                conds.push(Value::Object(x));
            }
            status.insert("conditions".into(), conds.into());
        }
    }
    Ok(json!({
        "kind": "Namespace",
        "apiVersion": api_version,
        "metadata": meta,
        "spec": spec,
        "status": status,
    }))
}

/// A Service as Go's JSON encoding of the decoded struct: plain fields omitted when empty,
/// pointer fields (`ipFamilyPolicy`, `internalTrafficPolicy`, ...) present when sent, `status`
/// always present (a struct), a port's `port` and `targetPort` always present.
fn service_json(svc: &Service, api_version: &str) -> Result<Value, String> {
    let meta = object_meta_json(&svc.metadata.clone().unwrap_or_default())?;
    let mut spec = Map::new();
    if let Some(sp) = &svc.spec {
        if !sp.ports.is_empty() {
            let ports = sp.ports.iter().map(|p| {
                let mut x = Map::new();
                put_str(&mut x, "name", p.name.as_deref());
                put_str(&mut x, "protocol", p.protocol.as_deref());
                if let Some(a) = &p.app_protocol {
                    x.insert("appProtocol".into(), a.as_str().into());
                }
                x.insert("port".into(), p.port.unwrap_or(0).into());
                let t = p.target_port.clone().unwrap_or_default();
                let target = if t.r#type == Some(1) {
                    Value::from(t.str_val.unwrap_or_default())
                } else {
                    Value::from(t.int_val.unwrap_or(0))
                };
                x.insert("targetPort".into(), target);
                if let Some(n) = p.node_port.filter(|n| *n != 0) {
                    x.insert("nodePort".into(), n.into());
                }
                Value::Object(x)
            });
            spec.insert("ports".into(), ports.collect());
        }
        if !sp.selector.is_empty() {
            spec.insert("selector".into(), json!(sp.selector));
        }
        put_str(&mut spec, "clusterIP", sp.cluster_ip.as_deref());
        if !sp.cluster_ips.is_empty() {
            spec.insert("clusterIPs".into(), sp.cluster_ips.clone().into());
        }
        put_str(&mut spec, "type", sp.r#type.as_deref());
        if !sp.external_ips.is_empty() {
            spec.insert("externalIPs".into(), sp.external_ips.clone().into());
        }
        put_str(&mut spec, "sessionAffinity", sp.session_affinity.as_deref());
        put_str(&mut spec, "loadBalancerIP", sp.load_balancer_ip.as_deref());
        if !sp.load_balancer_source_ranges.is_empty() {
            spec.insert(
                "loadBalancerSourceRanges".into(),
                sp.load_balancer_source_ranges.clone().into(),
            );
        }
        put_str(&mut spec, "externalName", sp.external_name.as_deref());
        put_str(
            &mut spec,
            "externalTrafficPolicy",
            sp.external_traffic_policy.as_deref(),
        );
        if let Some(n) = sp.health_check_node_port.filter(|n| *n != 0) {
            spec.insert("healthCheckNodePort".into(), n.into());
        }
        if sp.publish_not_ready_addresses == Some(true) {
            spec.insert("publishNotReadyAddresses".into(), true.into());
        }
        if let Some(c) = &sp.session_affinity_config {
            let mut x = Map::new();
            if let Some(ip) = &c.client_ip {
                let mut y = Map::new();
                if let Some(t) = ip.timeout_seconds {
                    y.insert("timeoutSeconds".into(), t.into());
                }
                x.insert("clientIP".into(), y.into());
            }
            spec.insert("sessionAffinityConfig".into(), x.into());
        }
        if !sp.ip_families.is_empty() {
            spec.insert("ipFamilies".into(), sp.ip_families.clone().into());
        }
        for (key, v) in [
            ("ipFamilyPolicy", &sp.ip_family_policy),
            ("loadBalancerClass", &sp.load_balancer_class),
            ("internalTrafficPolicy", &sp.internal_traffic_policy),
            ("trafficDistribution", &sp.traffic_distribution),
        ] {
            if let Some(v) = v {
                spec.insert(key.into(), v.as_str().into());
            }
        }
        if let Some(b) = sp.allocate_load_balancer_node_ports {
            spec.insert("allocateLoadBalancerNodePorts".into(), b.into());
        }
    }
    let mut lb = Map::new();
    let mut status = Map::new();
    if let Some(st) = &svc.status {
        let ingress = st
            .load_balancer
            .as_ref()
            .map_or(&[][..], |l| l.ingress.as_slice());
        if !ingress.is_empty() {
            let items = ingress.iter().map(|i| {
                let mut x = Map::new();
                put_str(&mut x, "ip", i.ip.as_deref());
                put_str(&mut x, "hostname", i.hostname.as_deref());
                if let Some(m) = &i.ip_mode {
                    x.insert("ipMode".into(), m.as_str().into());
                }
                if !i.ports.is_empty() {
                    let ports = i.ports.iter().map(|p| {
                        let mut y = Map::new();
                        y.insert("port".into(), p.port.unwrap_or(0).into());
                        y.insert(
                            "protocol".into(),
                            p.protocol.as_deref().unwrap_or("").into(),
                        );
                        if let Some(e) = &p.error {
                            y.insert("error".into(), e.as_str().into());
                        }
                        Value::Object(y)
                    });
                    x.insert("ports".into(), ports.collect());
                }
                Value::Object(x)
            });
            lb.insert("ingress".into(), items.collect());
        }
        if !st.conditions.is_empty() {
            let mut conds = Vec::with_capacity(st.conditions.len());
            for c in &st.conditions {
                let mut x = Map::new();
                x.insert("type".into(), c.r#type.as_deref().unwrap_or("").into());
                x.insert("status".into(), c.status.as_deref().unwrap_or("").into());
                if let Some(g) = c.observed_generation.filter(|g| *g != 0) {
                    x.insert("observedGeneration".into(), g.into());
                }
                let t = match &c.last_transition_time {
                    Some(t) => time_json(t)?,
                    None => Value::Null,
                };
                x.insert("lastTransitionTime".into(), t);
                x.insert("reason".into(), c.reason.as_deref().unwrap_or("").into());
                x.insert("message".into(), c.message.as_deref().unwrap_or("").into());
                conds.push(Value::Object(x));
            }
            status.insert("conditions".into(), conds.into());
        }
    }
    status.insert("loadBalancer".into(), lb.into());
    Ok(json!({
        "kind": "Service",
        "apiVersion": api_version,
        "metadata": meta,
        "spec": spec,
        "status": status,
    }))
}

/// An ObjectReference as Go's JSON encoding writes it (every field omitempty).
fn object_reference_json(r: &ObjectReference) -> Value {
    let mut x = Map::new();
    put_str(&mut x, "kind", r.kind.as_deref());
    put_str(&mut x, "namespace", r.namespace.as_deref());
    put_str(&mut x, "name", r.name.as_deref());
    put_str(&mut x, "uid", r.uid.as_deref());
    put_str(&mut x, "apiVersion", r.api_version.as_deref());
    put_str(&mut x, "resourceVersion", r.resource_version.as_deref());
    put_str(&mut x, "fieldPath", r.field_path.as_deref());
    Value::Object(x)
}

/// Endpoints as Go's JSON encoding of the decoded struct (an address's `ip` and a port's
/// `port` always present, the rest omitted when empty or unset).
fn endpoints_json(e: &Endpoints, api_version: &str) -> Result<Value, String> {
    let mut o = Map::new();
    o.insert("kind".into(), "Endpoints".into());
    o.insert("apiVersion".into(), api_version.into());
    o.insert(
        "metadata".into(),
        object_meta_json(&e.metadata.clone().unwrap_or_default())?,
    );
    let address = |a: &EndpointAddress| {
        let mut x = Map::new();
        x.insert("ip".into(), a.ip.as_deref().unwrap_or("").into());
        put_str(&mut x, "hostname", a.hostname.as_deref());
        if let Some(n) = &a.node_name {
            x.insert("nodeName".into(), n.as_str().into());
        }
        if let Some(r) = &a.target_ref {
            x.insert("targetRef".into(), object_reference_json(r));
        }
        Value::Object(x)
    };
    if !e.subsets.is_empty() {
        let subsets = e.subsets.iter().map(|ss| {
            let mut x = Map::new();
            if !ss.addresses.is_empty() {
                x.insert(
                    "addresses".into(),
                    ss.addresses.iter().map(address).collect(),
                );
            }
            if !ss.not_ready_addresses.is_empty() {
                x.insert(
                    "notReadyAddresses".into(),
                    ss.not_ready_addresses.iter().map(address).collect(),
                );
            }
            if !ss.ports.is_empty() {
                let ports = ss.ports.iter().map(|p| {
                    let mut y = Map::new();
                    put_str(&mut y, "name", p.name.as_deref());
                    y.insert("port".into(), p.port.unwrap_or(0).into());
                    put_str(&mut y, "protocol", p.protocol.as_deref());
                    if let Some(a) = &p.app_protocol {
                        y.insert("appProtocol".into(), a.as_str().into());
                    }
                    Value::Object(y)
                });
                x.insert("ports".into(), ports.collect());
            }
            Value::Object(x)
        });
        o.insert("subsets".into(), subsets.collect());
    }
    Ok(o.into())
}

/// An EndpointSlice as Go's JSON encoding of the decoded struct: `addressType`, `endpoints`
/// and `ports` always present (`null` when empty, as Go writes a nil slice), an endpoint's
/// `addresses` and `conditions` always present, pointer fields present when sent.
fn endpoint_slice_json(e: &EndpointSlice, api_version: &str) -> Result<Value, String> {
    let list_or_null = |items: Vec<Value>| {
        if items.is_empty() {
            Value::Null
        } else {
            Value::Array(items)
        }
    };
    let endpoints = e
        .endpoints
        .iter()
        .map(|ep| {
            let mut x = Map::new();
            x.insert(
                "addresses".into(),
                list_or_null(ep.addresses.iter().map(|a| a.as_str().into()).collect()),
            );
            let mut c = Map::new();
            if let Some(cond) = &ep.conditions {
                for (k, v) in [
                    ("ready", cond.ready),
                    ("serving", cond.serving),
                    ("terminating", cond.terminating),
                ] {
                    if let Some(b) = v {
                        c.insert(k.into(), b.into());
                    }
                }
            }
            x.insert("conditions".into(), c.into());
            if let Some(h) = &ep.hostname {
                x.insert("hostname".into(), h.as_str().into());
            }
            if let Some(r) = &ep.target_ref {
                x.insert("targetRef".into(), object_reference_json(r));
            }
            if !ep.deprecated_topology.is_empty() {
                x.insert("deprecatedTopology".into(), json!(ep.deprecated_topology));
            }
            if let Some(n) = &ep.node_name {
                x.insert("nodeName".into(), n.as_str().into());
            }
            if let Some(z) = &ep.zone {
                x.insert("zone".into(), z.as_str().into());
            }
            if let Some(h) = &ep.hints {
                let zones: Vec<Value> = h
                    .for_zones
                    .iter()
                    .map(|z| json!({"name": z.name.as_deref().unwrap_or("")}))
                    .collect();
                let mut hx = Map::new();
                if !zones.is_empty() {
                    hx.insert("forZones".into(), zones.into());
                }
                x.insert("hints".into(), hx.into());
            }
            Value::Object(x)
        })
        .collect();
    let ports = e
        .ports
        .iter()
        .map(|p| {
            let mut x = Map::new();
            for (k, v) in [
                ("name", &p.name),
                ("protocol", &p.protocol),
                ("appProtocol", &p.app_protocol),
            ] {
                if let Some(v) = v {
                    x.insert(k.into(), v.as_str().into());
                }
            }
            if let Some(n) = p.port {
                x.insert("port".into(), n.into());
            }
            Value::Object(x)
        })
        .collect();
    Ok(json!({
        "kind": "EndpointSlice",
        "apiVersion": api_version,
        "metadata": object_meta_json(&e.metadata.clone().unwrap_or_default())?,
        "addressType": e.address_type.as_deref().unwrap_or(""),
        "endpoints": list_or_null(endpoints),
        "ports": list_or_null(ports),
    }))
}

/// Encodes `msg` in the envelope, as a protobuf client sends it (tests and tools).
pub fn encode_envelope(api_version: &str, kind: &str, msg: &impl Message) -> Vec<u8> {
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some(api_version.into()),
            kind: Some(kind.into()),
        }),
        raw: Some(msg.encode_to_vec()),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut out = MAGIC.to_vec();
    out.extend(unknown.encode_to_vec());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // A wire encoder independent of the prost structs, so each field number is checked
    // against upstream's generated.proto rather than against itself.
    fn varint(mut v: u64, out: &mut Vec<u8>) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
    fn len_field(tag: u32, data: &[u8]) -> Vec<u8> {
        let mut out = vec![];
        varint(u64::from(tag) << 3 | 2, &mut out);
        varint(data.len() as u64, &mut out);
        out.extend_from_slice(data);
        out
    }
    fn str_field(tag: u32, s: &str) -> Vec<u8> {
        len_field(tag, s.as_bytes())
    }
    fn int_field(tag: u32, v: i64) -> Vec<u8> {
        let mut out = vec![];
        varint(u64::from(tag) << 3, &mut out);
        varint(v as u64, &mut out);
        out
    }
    fn map_entry(tag: u32, k: &str, v: &str) -> Vec<u8> {
        len_field(tag, &[str_field(1, k), str_field(2, v)].concat())
    }
    fn envelope_bytes(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
        let type_meta = [str_field(1, api_version), str_field(2, kind)].concat();
        let unknown = [len_field(1, &type_meta), len_field(2, raw)].concat();
        [MAGIC.to_vec(), unknown].concat()
    }
    fn time(seconds: i64) -> Vec<u8> {
        int_field(1, seconds)
    }

    #[test]
    fn lease_body_as_client_go_sends_it() {
        // A leader election renewal: metadata with name and resourceVersion, a spec with the
        // holder, the duration, both MicroTimes and the transitions.
        let meta = [str_field(1, "kube-scheduler"), str_field(6, "42")].concat();
        let renew = [int_field(1, 1_714_557_605), int_field(2, 123_456_000)].concat();
        let spec = [
            str_field(1, "node-a_1234"),
            int_field(2, 15),
            len_field(3, &time(1_714_557_600)),
            len_field(4, &renew),
            int_field(5, 3),
        ]
        .concat();
        let lease = [len_field(1, &meta), len_field(2, &spec)].concat();
        let body = envelope_bytes("coordination.k8s.io/v1", "Lease", &lease);
        let v = decode_object(&body, "coordination.k8s.io", "v1", "Lease").unwrap();
        assert_eq!(
            v,
            json!({
                "kind": "Lease", "apiVersion": "coordination.k8s.io/v1",
                "metadata": {"name": "kube-scheduler", "resourceVersion": "42", "creationTimestamp": null},
                "spec": {"holderIdentity": "node-a_1234", "leaseDurationSeconds": 15,
                         "acquireTime": "2024-05-01T10:00:00.000000Z",
                         "renewTime": "2024-05-01T10:00:05.123456Z", "leaseTransitions": 3},
            })
        );
        // Another group's kinds are not decoded.
        assert!(decode_object(&body, "coordination.k8s.io", "v1", "LeaseCandidate").is_err());
    }

    #[test]
    fn kubectl_create_namespace_body() {
        // `kubectl create namespace qq` (v1.32) as captured on the wire: gogo writes every
        // non-pointer field, empty ones included, and an empty creationTimestamp.
        let hex = "6b3873000a0f0a02763112094e616d657370616365121a0a120a02717112001a0022002a0032003800420012001a020a001a002200";
        let body: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        let v = decode_object(&body, "", "v1", "Namespace").unwrap();
        assert_eq!(
            v,
            json!({
                "kind": "Namespace", "apiVersion": "v1",
                "metadata": {"name": "qq", "creationTimestamp": null},
                "spec": {}, "status": {},
            })
        );
    }

    #[test]
    fn object_meta_and_namespace_field_numbers() {
        let owner = [
            str_field(1, "ConfigMap"),
            str_field(3, "owner"),
            str_field(4, "u-1"),
            str_field(5, "v1"),
            int_field(6, 1),
            int_field(7, 0),
        ]
        .concat();
        let managed = [
            str_field(1, "kubectl"),
            str_field(2, "Update"),
            str_field(3, "v1"),
            len_field(4, &time(1_700_000_000)),
            str_field(6, "FieldsV1"),
            len_field(7, &str_field(1, r#"{"f:metadata":{}}"#)),
            str_field(8, "status"),
        ]
        .concat();
        let meta = [
            str_field(1, "ns1"),
            str_field(2, "gen-"),
            str_field(3, "other"),
            str_field(4, "/api/v1/namespaces/ns1"),
            str_field(5, "uid-1"),
            str_field(6, "42"),
            int_field(7, 3),
            len_field(8, &time(0)),
            len_field(9, &[time(1_700_000_000), int_field(2, 5)].concat()),
            int_field(10, 30),
            map_entry(11, "a", "b"),
            map_entry(11, "c", "d"),
            map_entry(12, "note", "x y"),
            len_field(13, &owner),
            str_field(14, "f1"),
            str_field(14, "f2"),
            len_field(17, &managed),
        ]
        .concat();
        let condition = [
            str_field(1, "NamespaceContentRemaining"),
            str_field(2, "True"),
            len_field(4, &time(1_700_000_000)),
            str_field(5, "SomeResourcesRemain"),
            str_field(6, "left"),
        ]
        .concat();
        let ns = [
            len_field(1, &meta),
            len_field(2, &str_field(1, "kubernetes")),
            len_field(
                3,
                &[str_field(1, "Active"), len_field(2, &condition)].concat(),
            ),
        ]
        .concat();
        let v = decode_object(
            &envelope_bytes("v1", "Namespace", &ns),
            "",
            "v1",
            "Namespace",
        )
        .unwrap();
        assert_eq!(
            v,
            json!({
                "kind": "Namespace", "apiVersion": "v1",
                "metadata": {
                    "name": "ns1", "generateName": "gen-", "namespace": "other",
                    "selfLink": "/api/v1/namespaces/ns1", "uid": "uid-1",
                    "resourceVersion": "42", "generation": 3,
                    "creationTimestamp": "1970-01-01T00:00:00Z",
                    "deletionTimestamp": "2023-11-14T22:13:20Z",
                    "deletionGracePeriodSeconds": 30,
                    "labels": {"a": "b", "c": "d"},
                    "annotations": {"note": "x y"},
                    "ownerReferences": [{
                        "apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                        "uid": "u-1", "controller": true, "blockOwnerDeletion": false,
                    }],
                    "finalizers": ["f1", "f2"],
                    "managedFields": [{
                        "manager": "kubectl", "operation": "Update", "apiVersion": "v1",
                        "time": "2023-11-14T22:13:20Z", "fieldsType": "FieldsV1",
                        "fieldsV1": {"f:metadata": {}}, "subresource": "status",
                    }],
                },
                "spec": {"finalizers": ["kubernetes"]},
                "status": {
                    "phase": "Active",
                    "conditions": [{
                        "type": "NamespaceContentRemaining", "status": "True",
                        "lastTransitionTime": "2023-11-14T22:13:20Z",
                        "reason": "SomeResourcesRemain", "message": "left",
                    }],
                },
            })
        );
    }

    #[test]
    fn service_field_numbers() {
        let port = [
            str_field(1, "http"),
            str_field(2, "TCP"),
            int_field(3, 80),
            len_field(4, &[int_field(1, 0), int_field(2, 8080)].concat()),
            int_field(5, 0),
            str_field(6, "kubernetes.io/h2c"),
        ]
        .concat();
        let named = [
            int_field(3, 443),
            len_field(4, &[int_field(1, 1), str_field(3, "https")].concat()),
        ]
        .concat();
        let spec = [
            len_field(1, &port),
            len_field(1, &named),
            map_entry(2, "app", "web"),
            str_field(3, "10.0.0.1"),
            str_field(4, "ClusterIP"),
            str_field(5, "192.0.2.1"),
            str_field(7, "ClientIP"),
            str_field(8, ""),
            str_field(10, ""),
            int_field(12, 0),
            int_field(13, 1),
            len_field(14, &len_field(1, &int_field(1, 60))),
            str_field(17, "SingleStack"),
            str_field(18, "10.0.0.1"),
            str_field(19, "IPv4"),
            str_field(22, "Local"),
        ]
        .concat();
        let ingress = [str_field(1, "192.0.2.9"), str_field(3, "VIP")].concat();
        let status = len_field(1, &len_field(1, &ingress));
        let svc = [
            len_field(1, &str_field(1, "web")),
            len_field(2, &spec),
            len_field(3, &status),
        ]
        .concat();
        let v = decode_object(&envelope_bytes("v1", "Service", &svc), "", "v1", "Service").unwrap();
        assert_eq!(
            v,
            json!({
                "kind": "Service", "apiVersion": "v1",
                "metadata": {"name": "web", "creationTimestamp": null},
                "spec": {
                    "ports": [
                        {"name": "http", "protocol": "TCP", "appProtocol": "kubernetes.io/h2c",
                         "port": 80, "targetPort": 8080},
                        {"port": 443, "targetPort": "https"},
                    ],
                    "selector": {"app": "web"},
                    "clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1"], "type": "ClusterIP",
                    "externalIPs": ["192.0.2.1"], "sessionAffinity": "ClientIP",
                    "publishNotReadyAddresses": true,
                    "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 60}},
                    "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
                    "internalTrafficPolicy": "Local",
                },
                "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.9", "ipMode": "VIP"}]}},
            })
        );
    }

    #[test]
    fn endpoints_and_endpoint_slice_field_numbers() {
        let target = [str_field(1, "Pod"), str_field(3, "p1"), str_field(4, "u")].concat();
        let addr = [
            str_field(1, "10.0.0.1"),
            len_field(2, &target),
            str_field(3, "h"),
            str_field(4, "node-1"),
        ]
        .concat();
        let port = [
            str_field(1, "https"),
            int_field(2, 8443),
            str_field(3, "TCP"),
            str_field(4, "h2"),
        ]
        .concat();
        let subset = [
            len_field(1, &addr),
            len_field(2, &str_field(1, "10.0.0.2")),
            len_field(3, &port),
        ]
        .concat();
        let eps = [len_field(1, &str_field(1, "web")), len_field(2, &subset)].concat();
        let v = decode_object(
            &envelope_bytes("v1", "Endpoints", &eps),
            "",
            "v1",
            "Endpoints",
        )
        .unwrap();
        assert_eq!(
            v["subsets"],
            json!([{
                "addresses": [{"ip": "10.0.0.1", "hostname": "h", "nodeName": "node-1",
                               "targetRef": {"kind": "Pod", "name": "p1", "uid": "u"}}],
                "notReadyAddresses": [{"ip": "10.0.0.2"}],
                "ports": [{"name": "https", "port": 8443, "protocol": "TCP", "appProtocol": "h2"}],
            }])
        );
        let endpoint = [
            str_field(1, "10.0.0.1"),
            len_field(2, &[int_field(1, 1), int_field(3, 0)].concat()),
            str_field(6, "node-1"),
            str_field(7, "z1"),
            len_field(8, &len_field(1, &str_field(1, "z1"))),
        ]
        .concat();
        let slice_port = [str_field(1, ""), str_field(2, "TCP"), int_field(3, 443)].concat();
        let slice = [
            len_field(1, &str_field(1, "web-1")),
            len_field(2, &endpoint),
            len_field(3, &slice_port),
            str_field(4, "IPv4"),
        ]
        .concat();
        let v = decode_object(
            &envelope_bytes("discovery.k8s.io/v1", "EndpointSlice", &slice),
            "discovery.k8s.io",
            "v1",
            "EndpointSlice",
        )
        .unwrap();
        assert_eq!(
            v,
            json!({
                "kind": "EndpointSlice", "apiVersion": "discovery.k8s.io/v1",
                "metadata": {"name": "web-1", "creationTimestamp": null},
                "addressType": "IPv4",
                "endpoints": [{"addresses": ["10.0.0.1"],
                               "conditions": {"ready": true, "terminating": false},
                               "nodeName": "node-1", "zone": "z1",
                               "hints": {"forZones": [{"name": "z1"}]}}],
                "ports": [{"name": "", "protocol": "TCP", "port": 443}],
            })
        );
    }

    #[test]
    fn envelope_defaults_and_unknown_fields() {
        // Missing kind/apiVersion default to the endpoint's; undeclared fields are skipped.
        let ns = [len_field(
            1,
            &[str_field(1, "x"), str_field(15, "gone")].concat(),
        )]
        .concat();
        let body = [MAGIC.to_vec(), len_field(2, &ns)].concat();
        let v = decode_object(&body, "", "v1", "Namespace").unwrap();
        assert_eq!(
            v["metadata"],
            json!({"name": "x", "creationTimestamp": null})
        );
        assert_eq!(
            (v["kind"].as_str(), v["apiVersion"].as_str()),
            (Some("Namespace"), Some("v1"))
        );
    }

    #[test]
    fn secret_and_service_account_field_numbers() {
        let bytes_entry =
            |k: &str, v: &[u8]| len_field(2, &[str_field(1, k), len_field(2, v)].concat());
        let secret = [
            len_field(1, &str_field(1, "s")),
            bytes_entry("k", b"\x00\xffv"),
            str_field(3, "kubernetes.io/tls"),
            map_entry(4, "plain", "text"),
            int_field(5, 1),
        ]
        .concat();
        let v =
            decode_object(&envelope_bytes("v1", "Secret", &secret), "", "v1", "Secret").unwrap();
        assert_eq!(
            v,
            json!({
                "kind": "Secret", "apiVersion": "v1",
                "metadata": {"name": "s", "creationTimestamp": null},
                "data": {"k": "AP92"}, "stringData": {"plain": "text"},
                "type": "kubernetes.io/tls", "immutable": true,
            })
        );
        let object_ref = [
            str_field(1, "Secret"),
            str_field(2, "ns"),
            str_field(3, "tok"),
            str_field(4, "u"),
            str_field(5, "v1"),
            str_field(6, "7"),
            str_field(7, "data"),
        ]
        .concat();
        let sa = [
            len_field(1, &str_field(1, "robot")),
            len_field(2, &object_ref),
            len_field(3, &str_field(1, "pull")),
            len_field(3, &[]),
            int_field(4, 0),
        ]
        .concat();
        let v = decode_object(
            &envelope_bytes("v1", "ServiceAccount", &sa),
            "",
            "v1",
            "ServiceAccount",
        )
        .unwrap();
        assert_eq!(
            v,
            json!({
                "kind": "ServiceAccount", "apiVersion": "v1",
                "metadata": {"name": "robot", "creationTimestamp": null},
                "secrets": [{"kind": "Secret", "namespace": "ns", "name": "tok", "uid": "u",
                             "apiVersion": "v1", "resourceVersion": "7", "fieldPath": "data"}],
                "imagePullSecrets": [{"name": "pull"}, {}],
                "automountServiceAccountToken": false,
            })
        );
    }

    #[test]
    fn event_field_numbers() {
        let reference = [
            str_field(1, "CronTab"),
            str_field(2, "default"),
            str_field(3, "x"),
            str_field(5, "stable.example.com/v1"),
        ]
        .concat();
        let core = [
            len_field(1, &str_field(1, "e1")),
            len_field(2, &reference),
            str_field(3, "Made"),
            str_field(4, "made it"),
            len_field(5, &str_field(1, "tester")),
            len_field(6, &time(1_700_000_000)),
            int_field(8, 2),
            str_field(9, "Normal"),
            len_field(
                10,
                &[int_field(1, 1_700_000_000), int_field(2, 5_000)].concat(),
            ),
            str_field(14, "ctl"),
        ]
        .concat();
        let v = decode_object(&envelope_bytes("v1", "Event", &core), "", "v1", "Event").unwrap();
        assert_eq!(
            v,
            json!({"kind": "Event", "apiVersion": "v1", "metadata": {"name": "e1", "creationTimestamp": null},
                   "involvedObject": {"kind": "CronTab", "namespace": "default", "name": "x",
                                      "apiVersion": "stable.example.com/v1"},
                   "reason": "Made", "message": "made it", "source": {"component": "tester"},
                   "firstTimestamp": "2023-11-14T22:13:20Z", "count": 2, "type": "Normal",
                   "eventTime": "2023-11-14T22:13:20.000005Z", "reportingComponent": "ctl"})
        );
        let events = [
            len_field(1, &str_field(1, "e2")),
            len_field(2, &time(1_700_000_000)),
            len_field(
                3,
                &[int_field(1, 3), len_field(2, &time(1_700_000_001))].concat(),
            ),
            str_field(4, "example.com/ctl"),
            str_field(5, "i"),
            str_field(6, "Sync"),
            str_field(7, "Synced"),
            len_field(8, &reference),
            str_field(10, "note"),
            str_field(11, "Warning"),
            int_field(15, 4),
        ]
        .concat();
        let v = decode_object(
            &envelope_bytes("events.k8s.io/v1", "Event", &events),
            "events.k8s.io",
            "v1",
            "Event",
        )
        .unwrap();
        assert_eq!(
            v,
            json!({"kind": "Event", "apiVersion": "events.k8s.io/v1", "metadata": {"name": "e2", "creationTimestamp": null},
                   "eventTime": "2023-11-14T22:13:20.000000Z",
                   "series": {"count": 3, "lastObservedTime": "2023-11-14T22:13:21.000000Z"},
                   "reportingController": "example.com/ctl", "reportingInstance": "i",
                   "action": "Sync", "reason": "Synced",
                   "regarding": {"kind": "CronTab", "namespace": "default", "name": "x",
                                 "apiVersion": "stable.example.com/v1"},
                   "note": "note", "type": "Warning", "deprecatedCount": 4})
        );
    }

    #[test]
    fn delete_options_field_numbers() {
        let raw = [
            int_field(1, 0),
            len_field(2, &[str_field(1, "uid-1"), str_field(2, "")].concat()),
            int_field(3, 1),
            str_field(4, "Foreground"),
            str_field(5, "All"),
        ]
        .concat();
        let v = decode_delete_options(&envelope_bytes("v1", "DeleteOptions", &raw)).unwrap();
        assert_eq!(
            v,
            json!({
                "kind": "DeleteOptions", "apiVersion": "v1",
                "gracePeriodSeconds": 0,
                "preconditions": {"uid": "uid-1", "resourceVersion": ""},
                "orphanDependents": true, "propagationPolicy": "Foreground",
                "dryRun": ["All"],
            })
        );
        // Absent pointer fields stay absent.
        let v = decode_delete_options(&envelope_bytes("", "", &[])).unwrap();
        assert_eq!(v, json!({}));
    }

    #[test]
    fn malformed_bodies() {
        let e = decode_object(b"{\"kind\":\"Namespace\"}", "", "v1", "Namespace").unwrap_err();
        assert_eq!(
            (e.code, e.reason),
            (400, Some(crest_api::Reason::BadRequest))
        );
        assert_eq!(
            e.message,
            "the object provided is unrecognized (must be of type Namespace): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] ({\"kind\":\"Namespace\"})"
        );
        let e = decode_object(b"k8s\0", "", "v1", "Namespace").unwrap_err();
        assert_eq!(
            e.message,
            "the object provided is unrecognized (must be of type Namespace): empty body (6b387300)"
        );
        // Cut off inside the envelope.
        let body = envelope_bytes("v1", "Namespace", &len_field(1, &str_field(1, "x")));
        let e = decode_object(&body[..body.len() - 2], "", "v1", "Namespace").unwrap_err();
        assert!(
            e.message.starts_with(
                "the object provided is unrecognized (must be of type Namespace): unexpected EOF (6b387300"
            ),
            "{}",
            e.message
        );
        // The envelope is fine, the Namespace inside is cut off.
        let body = envelope_bytes("v1", "Namespace", &[0x0a, 0x05, 0x0a]);
        let e = decode_object(&body, "", "v1", "Namespace").unwrap_err();
        assert_eq!(
            e.message,
            "Namespace in version \"v1\" cannot be handled as a Namespace: unexpected EOF"
        );
        let e = decode_object(
            &envelope_bytes("v2", "Namespace", &[]),
            "",
            "v1",
            "Namespace",
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "Namespace in version \"v2\" cannot be handled as a Namespace: no kind \"Namespace\" is registered for version \"v2\" in scheme \"pkg/api/legacyscheme/scheme.go:30\""
        );
        let e = decode_delete_options(b"k8s\0\x0a").unwrap_err();
        assert_eq!((e.code, e.message.as_str()), (400, "unexpected EOF"));
        // Custom resources (and kinds Crest takes only as JSON) are 415.
        let e = decode_object(&[], "stable.example.com", "v1", "CronTab").unwrap_err();
        assert_eq!(e.code, 415);
    }

    #[test]
    fn round_trip_through_the_structs() {
        let ns = Namespace {
            metadata: Some(ObjectMeta {
                name: Some("rt".into()),
                labels: [("k".to_string(), "v".to_string())].into(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let v = decode_object(
            &encode_envelope("v1", "Namespace", &ns),
            "",
            "v1",
            "Namespace",
        )
        .unwrap();
        assert_eq!(v["metadata"]["labels"], json!({"k": "v"}));
    }
}

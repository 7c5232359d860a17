//! The swagger 2.0 document as gnostic's protobuf `openapi.v2.Document`
//! (github.com/google/gnostic-models, `openapiv2/OpenAPIv2.proto`): what kube-openapi serves
//! for `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf` and what client-go's
//! `OpenAPISchema()` reads (kubectl validates `kind: List` files with it).
//!
//! The conversion follows gnostic's `ParseDocument`, which reads the JSON document as YAML and
//! fills the messages field by field: JSON maps become repeated `Named*` pairs in document order,
//! `$ref` the `_ref` fields, a schema's `type` a `TypeItem`, `items` an `ItemsItem` of one
//! schema, `additionalProperties` a schema or a boolean, a parameter the body or the non-body
//! variant its `in` names, a response or parameter with `$ref` a `JsonReference`, `x-` keys
//! vendor extensions, and defaults, enums, examples and extension values `Any`s holding their
//! YAML text as go-yaml writes it ([`crate::goyaml`]). gnostic refuses a document with keys its
//! messages do not have (kube-openapi then answers 503); here such keys are skipped and reported
//! (the tests check the documents Crest publishes have none).

use crate::goyaml;
use prost::Message;
use serde_json::{Map, Value};

/// The protobuf form of a swagger 2.0 document (kube-openapi's `ToProtoBinary`).
pub fn v2_protobuf(doc: &Value) -> Vec<u8> {
    convert(doc).0.encode_to_vec()
}

/// The gnostic document and what gnostic would have refused.
pub(crate) fn convert(doc: &Value) -> (Document, Vec<String>) {
    let mut cx = Cx::default();
    let d = cx.document(doc);
    (d, cx.problems)
}

// The messages of OpenAPIv2.proto that documents of the Kubernetes API use, with their field
// numbers, declared in field order (as Go's proto.Marshal writes them).

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Document {
    #[prost(string, tag = "1")]
    pub swagger: String,
    #[prost(message, optional, tag = "2")]
    pub info: Option<Info>,
    #[prost(string, tag = "3")]
    pub host: String,
    #[prost(string, tag = "4")]
    pub base_path: String,
    #[prost(string, repeated, tag = "5")]
    pub schemes: Vec<String>,
    #[prost(string, repeated, tag = "6")]
    pub consumes: Vec<String>,
    #[prost(string, repeated, tag = "7")]
    pub produces: Vec<String>,
    #[prost(message, optional, tag = "8")]
    pub paths: Option<Paths>,
    #[prost(message, optional, tag = "9")]
    pub definitions: Option<Definitions>,
    #[prost(message, optional, tag = "10")]
    pub parameters: Option<ParameterDefinitions>,
    #[prost(message, optional, tag = "11")]
    pub responses: Option<ResponseDefinitions>,
    #[prost(message, repeated, tag = "12")]
    pub security: Vec<SecurityRequirement>,
    #[prost(message, optional, tag = "13")]
    pub security_definitions: Option<SecurityDefinitions>,
    #[prost(message, repeated, tag = "14")]
    pub tags: Vec<Tag>,
    #[prost(message, optional, tag = "15")]
    pub external_docs: Option<ExternalDocs>,
    #[prost(message, repeated, tag = "16")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Info {
    #[prost(string, tag = "1")]
    pub title: String,
    #[prost(string, tag = "2")]
    pub version: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(string, tag = "4")]
    pub terms_of_service: String,
    #[prost(message, optional, tag = "5")]
    pub contact: Option<Contact>,
    #[prost(message, optional, tag = "6")]
    pub license: Option<License>,
    #[prost(message, repeated, tag = "7")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Contact {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub url: String,
    #[prost(string, tag = "3")]
    pub email: String,
    #[prost(message, repeated, tag = "4")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct License {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub url: String,
    #[prost(message, repeated, tag = "3")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct ExternalDocs {
    #[prost(string, tag = "1")]
    pub description: String,
    #[prost(string, tag = "2")]
    pub url: String,
    #[prost(message, repeated, tag = "3")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Tag {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub description: String,
    #[prost(message, optional, tag = "3")]
    pub external_docs: Option<ExternalDocs>,
    #[prost(message, repeated, tag = "4")]
    pub vendor_extension: Vec<NamedAny>,
}

/// gnostic's `Any`: field 1 (a `google.protobuf.Any`) is set only by gnostic extension plugins,
/// which kube-openapi does not use.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct Any {
    #[prost(string, tag = "2")]
    pub yaml: String,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct NamedAny {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<Any>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Paths {
    #[prost(message, repeated, tag = "1")]
    pub vendor_extension: Vec<NamedAny>,
    #[prost(message, repeated, tag = "2")]
    pub path: Vec<NamedPathItem>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct NamedPathItem {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<PathItem>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct PathItem {
    #[prost(string, tag = "1")]
    pub _ref: String,
    #[prost(message, optional, tag = "2")]
    pub get: Option<Operation>,
    #[prost(message, optional, tag = "3")]
    pub put: Option<Operation>,
    #[prost(message, optional, tag = "4")]
    pub post: Option<Operation>,
    #[prost(message, optional, tag = "5")]
    pub delete: Option<Operation>,
    #[prost(message, optional, tag = "6")]
    pub options: Option<Operation>,
    #[prost(message, optional, tag = "7")]
    pub head: Option<Operation>,
    #[prost(message, optional, tag = "8")]
    pub patch: Option<Operation>,
    #[prost(message, repeated, tag = "9")]
    pub parameters: Vec<ParametersItem>,
    #[prost(message, repeated, tag = "10")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Operation {
    #[prost(string, repeated, tag = "1")]
    pub tags: Vec<String>,
    #[prost(string, tag = "2")]
    pub summary: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(message, optional, tag = "4")]
    pub external_docs: Option<ExternalDocs>,
    #[prost(string, tag = "5")]
    pub operation_id: String,
    #[prost(string, repeated, tag = "6")]
    pub produces: Vec<String>,
    #[prost(string, repeated, tag = "7")]
    pub consumes: Vec<String>,
    #[prost(message, repeated, tag = "8")]
    pub parameters: Vec<ParametersItem>,
    #[prost(message, optional, tag = "9")]
    pub responses: Option<Responses>,
    #[prost(string, repeated, tag = "10")]
    pub schemes: Vec<String>,
    #[prost(bool, tag = "11")]
    pub deprecated: bool,
    #[prost(message, repeated, tag = "12")]
    pub security: Vec<SecurityRequirement>,
    #[prost(message, repeated, tag = "13")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct ParametersItem {
    #[prost(oneof = "ParametersItemOneof", tags = "1, 2")]
    pub oneof: Option<ParametersItemOneof>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum ParametersItemOneof {
    #[prost(message, boxed, tag = "1")]
    Parameter(Box<Parameter>),
    #[prost(message, tag = "2")]
    JsonReference(JsonReference),
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Parameter {
    #[prost(oneof = "ParameterOneof", tags = "1, 2")]
    pub oneof: Option<ParameterOneof>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum ParameterOneof {
    #[prost(message, tag = "1")]
    BodyParameter(BodyParameter),
    #[prost(message, tag = "2")]
    NonBodyParameter(NonBodyParameter),
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct BodyParameter {
    #[prost(string, tag = "1")]
    pub description: String,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, tag = "3")]
    pub r#in: String,
    #[prost(bool, tag = "4")]
    pub required: bool,
    #[prost(message, optional, tag = "5")]
    pub schema: Option<Schema>,
    #[prost(message, repeated, tag = "6")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct NonBodyParameter {
    #[prost(oneof = "NonBodyParameterOneof", tags = "1, 2, 3, 4")]
    pub oneof: Option<NonBodyParameterOneof>,
}

/// Header and path parameters share one field layout, form-data and query parameters another
/// (with `allowEmptyValue` as field 5).
#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum NonBodyParameterOneof {
    /// `header_parameter_sub_schema`
    #[prost(message, tag = "1")]
    Header(SubSchema),
    /// `form_data_parameter_sub_schema`
    #[prost(message, tag = "2")]
    FormData(SubSchemaWithEmptyValue),
    /// `query_parameter_sub_schema`
    #[prost(message, tag = "3")]
    Query(SubSchemaWithEmptyValue),
    /// `path_parameter_sub_schema`
    #[prost(message, tag = "4")]
    Path(SubSchema),
}

/// `HeaderParameterSubSchema` and `PathParameterSubSchema`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct SubSchema {
    #[prost(bool, tag = "1")]
    pub required: bool,
    #[prost(string, tag = "2")]
    pub r#in: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(string, tag = "4")]
    pub name: String,
    #[prost(string, tag = "5")]
    pub r#type: String,
    #[prost(string, tag = "6")]
    pub format: String,
    #[prost(message, optional, tag = "7")]
    pub items: Option<PrimitivesItems>,
    #[prost(string, tag = "8")]
    pub collection_format: String,
    #[prost(message, optional, tag = "9")]
    pub default: Option<Any>,
    #[prost(double, tag = "10")]
    pub maximum: f64,
    #[prost(bool, tag = "11")]
    pub exclusive_maximum: bool,
    #[prost(double, tag = "12")]
    pub minimum: f64,
    #[prost(bool, tag = "13")]
    pub exclusive_minimum: bool,
    #[prost(int64, tag = "14")]
    pub max_length: i64,
    #[prost(int64, tag = "15")]
    pub min_length: i64,
    #[prost(string, tag = "16")]
    pub pattern: String,
    #[prost(int64, tag = "17")]
    pub max_items: i64,
    #[prost(int64, tag = "18")]
    pub min_items: i64,
    #[prost(bool, tag = "19")]
    pub unique_items: bool,
    #[prost(message, repeated, tag = "20")]
    pub r#enum: Vec<Any>,
    #[prost(double, tag = "21")]
    pub multiple_of: f64,
    #[prost(message, repeated, tag = "22")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `QueryParameterSubSchema` and `FormDataParameterSubSchema`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct SubSchemaWithEmptyValue {
    #[prost(bool, tag = "1")]
    pub required: bool,
    #[prost(string, tag = "2")]
    pub r#in: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(string, tag = "4")]
    pub name: String,
    #[prost(bool, tag = "5")]
    pub allow_empty_value: bool,
    #[prost(string, tag = "6")]
    pub r#type: String,
    #[prost(string, tag = "7")]
    pub format: String,
    #[prost(message, optional, tag = "8")]
    pub items: Option<PrimitivesItems>,
    #[prost(string, tag = "9")]
    pub collection_format: String,
    #[prost(message, optional, tag = "10")]
    pub default: Option<Any>,
    #[prost(double, tag = "11")]
    pub maximum: f64,
    #[prost(bool, tag = "12")]
    pub exclusive_maximum: bool,
    #[prost(double, tag = "13")]
    pub minimum: f64,
    #[prost(bool, tag = "14")]
    pub exclusive_minimum: bool,
    #[prost(int64, tag = "15")]
    pub max_length: i64,
    #[prost(int64, tag = "16")]
    pub min_length: i64,
    #[prost(string, tag = "17")]
    pub pattern: String,
    #[prost(int64, tag = "18")]
    pub max_items: i64,
    #[prost(int64, tag = "19")]
    pub min_items: i64,
    #[prost(bool, tag = "20")]
    pub unique_items: bool,
    #[prost(message, repeated, tag = "21")]
    pub r#enum: Vec<Any>,
    #[prost(double, tag = "22")]
    pub multiple_of: f64,
    #[prost(message, repeated, tag = "23")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct PrimitivesItems {
    #[prost(string, tag = "1")]
    pub r#type: String,
    #[prost(string, tag = "2")]
    pub format: String,
    #[prost(message, optional, boxed, tag = "3")]
    pub items: Option<Box<PrimitivesItems>>,
    #[prost(string, tag = "4")]
    pub collection_format: String,
    #[prost(message, optional, tag = "5")]
    pub default: Option<Any>,
    #[prost(double, tag = "6")]
    pub maximum: f64,
    #[prost(bool, tag = "7")]
    pub exclusive_maximum: bool,
    #[prost(double, tag = "8")]
    pub minimum: f64,
    #[prost(bool, tag = "9")]
    pub exclusive_minimum: bool,
    #[prost(int64, tag = "10")]
    pub max_length: i64,
    #[prost(int64, tag = "11")]
    pub min_length: i64,
    #[prost(string, tag = "12")]
    pub pattern: String,
    #[prost(int64, tag = "13")]
    pub max_items: i64,
    #[prost(int64, tag = "14")]
    pub min_items: i64,
    #[prost(bool, tag = "15")]
    pub unique_items: bool,
    #[prost(message, repeated, tag = "16")]
    pub r#enum: Vec<Any>,
    #[prost(double, tag = "17")]
    pub multiple_of: f64,
    #[prost(message, repeated, tag = "18")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct JsonReference {
    #[prost(string, tag = "1")]
    pub _ref: String,
    #[prost(string, tag = "2")]
    pub description: String,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Responses {
    #[prost(message, repeated, tag = "1")]
    pub response_code: Vec<NamedResponseValue>,
    #[prost(message, repeated, tag = "2")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct NamedResponseValue {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<ResponseValue>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct ResponseValue {
    #[prost(oneof = "ResponseValueOneof", tags = "1, 2")]
    pub oneof: Option<ResponseValueOneof>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum ResponseValueOneof {
    #[prost(message, boxed, tag = "1")]
    Response(Box<Response>),
    #[prost(message, tag = "2")]
    JsonReference(JsonReference),
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Response {
    #[prost(string, tag = "1")]
    pub description: String,
    #[prost(message, optional, tag = "2")]
    pub schema: Option<SchemaItem>,
    // 3: headers (not in the Kubernetes documents).
    #[prost(message, optional, tag = "4")]
    pub examples: Option<Examples>,
    #[prost(message, repeated, tag = "5")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Examples {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedAny>,
}

/// `SchemaItem`; its `FileSchema` variant (2) is not in the Kubernetes documents.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct SchemaItem {
    #[prost(message, optional, tag = "1")]
    pub schema: Option<Schema>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Schema {
    #[prost(string, tag = "1")]
    pub _ref: String,
    #[prost(string, tag = "2")]
    pub format: String,
    #[prost(string, tag = "3")]
    pub title: String,
    #[prost(string, tag = "4")]
    pub description: String,
    #[prost(message, optional, tag = "5")]
    pub default: Option<Any>,
    #[prost(double, tag = "6")]
    pub multiple_of: f64,
    #[prost(double, tag = "7")]
    pub maximum: f64,
    #[prost(bool, tag = "8")]
    pub exclusive_maximum: bool,
    #[prost(double, tag = "9")]
    pub minimum: f64,
    #[prost(bool, tag = "10")]
    pub exclusive_minimum: bool,
    #[prost(int64, tag = "11")]
    pub max_length: i64,
    #[prost(int64, tag = "12")]
    pub min_length: i64,
    #[prost(string, tag = "13")]
    pub pattern: String,
    #[prost(int64, tag = "14")]
    pub max_items: i64,
    #[prost(int64, tag = "15")]
    pub min_items: i64,
    #[prost(bool, tag = "16")]
    pub unique_items: bool,
    #[prost(int64, tag = "17")]
    pub max_properties: i64,
    #[prost(int64, tag = "18")]
    pub min_properties: i64,
    #[prost(string, repeated, tag = "19")]
    pub required: Vec<String>,
    #[prost(message, repeated, tag = "20")]
    pub r#enum: Vec<Any>,
    #[prost(message, optional, tag = "21")]
    pub additional_properties: Option<AdditionalPropertiesItem>,
    #[prost(message, optional, tag = "22")]
    pub r#type: Option<TypeItem>,
    #[prost(message, optional, tag = "23")]
    pub items: Option<ItemsItem>,
    #[prost(message, repeated, tag = "24")]
    pub all_of: Vec<Schema>,
    #[prost(message, optional, tag = "25")]
    pub properties: Option<Properties>,
    #[prost(string, tag = "26")]
    pub discriminator: String,
    #[prost(bool, tag = "27")]
    pub read_only: bool,
    #[prost(message, optional, tag = "28")]
    pub xml: Option<Xml>,
    #[prost(message, optional, tag = "29")]
    pub external_docs: Option<ExternalDocs>,
    #[prost(message, optional, tag = "30")]
    pub example: Option<Any>,
    #[prost(message, repeated, tag = "31")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Xml {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub namespace: String,
    #[prost(string, tag = "3")]
    pub prefix: String,
    #[prost(bool, tag = "4")]
    pub attribute: bool,
    #[prost(bool, tag = "5")]
    pub wrapped: bool,
    #[prost(message, repeated, tag = "6")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct AdditionalPropertiesItem {
    #[prost(oneof = "AdditionalPropertiesOneof", tags = "1, 2")]
    pub oneof: Option<AdditionalPropertiesOneof>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum AdditionalPropertiesOneof {
    #[prost(message, boxed, tag = "1")]
    Schema(Box<Schema>),
    #[prost(bool, tag = "2")]
    Boolean(bool),
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct TypeItem {
    #[prost(string, repeated, tag = "1")]
    pub value: Vec<String>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct ItemsItem {
    #[prost(message, repeated, tag = "1")]
    pub schema: Vec<Schema>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Properties {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedSchema>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct NamedSchema {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<Schema>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Definitions {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedSchema>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct ParameterDefinitions {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedParameter>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct NamedParameter {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<Parameter>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct ResponseDefinitions {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedResponse>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct NamedResponse {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<Response>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct SecurityRequirement {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedStringArray>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct NamedStringArray {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<StringArray>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct StringArray {
    #[prost(string, repeated, tag = "1")]
    pub value: Vec<String>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct SecurityDefinitions {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedSecurityDefinitionsItem>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct NamedSecurityDefinitionsItem {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<SecurityDefinitionsItem>,
}

/// `SecurityDefinitionsItem`; its OAuth2 variants (3 to 6) are not in the Kubernetes documents.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct SecurityDefinitionsItem {
    #[prost(oneof = "SecurityDefinitionsOneof", tags = "1, 2")]
    pub oneof: Option<SecurityDefinitionsOneof>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum SecurityDefinitionsOneof {
    #[prost(message, tag = "1")]
    BasicAuthenticationSecurity(BasicAuthenticationSecurity),
    #[prost(message, tag = "2")]
    ApiKeySecurity(ApiKeySecurity),
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct BasicAuthenticationSecurity {
    #[prost(string, tag = "1")]
    pub r#type: String,
    #[prost(string, tag = "2")]
    pub description: String,
    #[prost(message, repeated, tag = "3")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct ApiKeySecurity {
    #[prost(string, tag = "1")]
    pub r#type: String,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, tag = "3")]
    pub r#in: String,
    #[prost(string, tag = "4")]
    pub description: String,
    #[prost(message, repeated, tag = "5")]
    pub vendor_extension: Vec<NamedAny>,
}

/// The keys of a swagger parameter's primitive constraints (non-body parameters and items).
const PRIMITIVE_KEYS: &[&str] = &[
    "collectionFormat",
    "default",
    "enum",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "format",
    "items",
    "maxItems",
    "maxLength",
    "maximum",
    "minItems",
    "minLength",
    "minimum",
    "multipleOf",
    "pattern",
    "type",
    "uniqueItems",
];

/// The fields shared by the non-body parameter messages and `PrimitivesItems`.
#[derive(Default)]
struct Primitive {
    r#type: String,
    format: String,
    items: Option<PrimitivesItems>,
    collection_format: String,
    default: Option<Any>,
    maximum: f64,
    exclusive_maximum: bool,
    minimum: f64,
    exclusive_minimum: bool,
    max_length: i64,
    min_length: i64,
    pattern: String,
    max_items: i64,
    min_items: i64,
    unique_items: bool,
    r#enum: Vec<Any>,
    multiple_of: f64,
    vendor_extension: Vec<NamedAny>,
}

/// The conversion's state: where it is (for the reports) and what gnostic would refuse.
#[derive(Default)]
struct Cx {
    path: Vec<String>,
    problems: Vec<String>,
}

fn any(v: &Value) -> Any {
    Any {
        yaml: goyaml::marshal(v),
    }
}

fn vendor(m: &Map<String, Value>) -> Vec<NamedAny> {
    m.iter()
        .filter(|(k, _)| k.starts_with("x-"))
        .map(|(k, v)| NamedAny {
            name: k.clone(),
            value: Some(any(v)),
        })
        .collect()
}

impl Cx {
    fn problem(&mut self, what: String) {
        self.problems
            .push(format!("{}: {what}", self.path.join("/")));
    }

    fn at<T>(&mut self, key: &str, f: impl FnOnce(&mut Self) -> T) -> T {
        self.path.push(key.to_string());
        let r = f(self);
        self.path.pop();
        r
    }

    /// The object `v` is, with gnostic's check of its keys.
    fn object<'a>(
        &mut self,
        v: &'a Value,
        allowed: &[&str],
        required: &[&str],
    ) -> Option<&'a Map<String, Value>> {
        let Some(m) = v.as_object() else {
            self.problem(format!("not an object: {v}"));
            return None;
        };
        for k in m.keys() {
            if !k.starts_with("x-") && !allowed.contains(&k.as_str()) {
                self.problem(format!("invalid key {k:?}"));
            }
        }
        for k in required {
            if !m.contains_key(*k) {
                self.problem(format!("missing key {k:?}"));
            }
        }
        Some(m)
    }

    /// gnostic's `StringForScalarNode`: strings, integers (their text) and null ("").
    fn string(&mut self, m: &Map<String, Value>, key: &str) -> String {
        let Some(v) = m.get(key) else {
            return String::new();
        };
        string_for_scalar(v).unwrap_or_else(|| {
            self.problem(format!("{key}: not a string: {v}"));
            String::new()
        })
    }

    fn enum_string(&mut self, m: &Map<String, Value>, key: &str, allowed: &[&str]) -> String {
        let s = self.string(m, key);
        if m.contains_key(key) && !allowed.contains(&s.as_str()) {
            self.problem(format!("{key}: unexpected value {s:?}"));
        }
        s
    }

    fn bool(&mut self, m: &Map<String, Value>, key: &str) -> bool {
        match m.get(key) {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(v) => {
                self.problem(format!("{key}: not a boolean: {v}"));
                false
            }
        }
    }

    /// gnostic's `IntForScalarNode`: an integer.
    fn int(&mut self, m: &Map<String, Value>, key: &str) -> i64 {
        match m.get(key) {
            None => 0,
            Some(Value::Number(n)) if n.is_i64() => n.as_i64().unwrap_or_default(),
            Some(v) => {
                self.problem(format!("{key}: not an int64: {v}"));
                0
            }
        }
    }

    /// gnostic's `FloatForScalarNode`: any number.
    fn float(&mut self, m: &Map<String, Value>, key: &str) -> f64 {
        match m.get(key) {
            None => 0.0,
            Some(Value::Number(n)) => n.as_f64().unwrap_or_default(),
            Some(v) => {
                self.problem(format!("{key}: not a number: {v}"));
                0.0
            }
        }
    }

    /// gnostic's `StringArrayForSequenceNode`: the items that are strings (or integers, null).
    fn strings(&mut self, m: &Map<String, Value>, key: &str) -> Vec<String> {
        match m.get(key) {
            None => vec![],
            Some(Value::Array(items)) => items.iter().filter_map(string_for_scalar).collect(),
            Some(v) => {
                self.problem(format!("{key}: not an array: {v}"));
                vec![]
            }
        }
    }

    fn schemes(&mut self, m: &Map<String, Value>) -> Vec<String> {
        let s = self.strings(m, "schemes");
        if s.iter()
            .any(|x| !["http", "https", "ws", "wss"].contains(&x.as_str()))
        {
            self.problem(format!("schemes: unexpected value {s:?}"));
        }
        s
    }

    fn anys(&mut self, m: &Map<String, Value>, key: &str) -> Vec<Any> {
        match m.get(key) {
            None => vec![],
            Some(Value::Array(items)) => items.iter().map(any).collect(),
            Some(v) => {
                self.problem(format!("{key}: not an array: {v}"));
                vec![]
            }
        }
    }

    /// A message-valued field: `f` on the value under `key`, if there is one.
    fn field<T>(
        &mut self,
        m: &Map<String, Value>,
        key: &str,
        f: impl FnOnce(&mut Self, &Value) -> T,
    ) -> Option<T> {
        let v = m.get(key)?;
        Some(self.at(key, |cx| f(cx, v)))
    }

    /// A repeated message field from a JSON array.
    fn list<T>(
        &mut self,
        m: &Map<String, Value>,
        key: &str,
        mut f: impl FnMut(&mut Self, &Value) -> T,
    ) -> Vec<T> {
        match m.get(key) {
            None => vec![],
            Some(Value::Array(items)) => {
                self.at(key, |cx| items.iter().map(|v| f(cx, v)).collect())
            }
            Some(v) => {
                self.problem(format!("{key}: not an array: {v}"));
                vec![]
            }
        }
    }

    /// A JSON map as (name, message) pairs in document order.
    fn named<T>(
        &mut self,
        v: &Value,
        mut f: impl FnMut(&mut Self, &Value) -> T,
    ) -> Vec<(String, T)> {
        let Some(m) = v.as_object() else {
            self.problem(format!("not an object: {v}"));
            return vec![];
        };
        m.iter()
            .map(|(k, v)| (k.clone(), self.at(k, |cx| f(cx, v))))
            .collect()
    }

    fn document(&mut self, v: &Value) -> Document {
        let allowed = [
            "basePath",
            "consumes",
            "definitions",
            "externalDocs",
            "host",
            "info",
            "parameters",
            "paths",
            "produces",
            "responses",
            "schemes",
            "security",
            "securityDefinitions",
            "swagger",
            "tags",
        ];
        let Some(m) = self.object(v, &allowed, &["info", "paths", "swagger"]) else {
            return Document::default();
        };
        Document {
            swagger: self.enum_string(m, "swagger", &["2.0"]),
            info: self.field(m, "info", Self::info),
            host: self.string(m, "host"),
            base_path: self.string(m, "basePath"),
            schemes: self.schemes(m),
            consumes: self.strings(m, "consumes"),
            produces: self.strings(m, "produces"),
            paths: self.field(m, "paths", Self::paths),
            definitions: self.field(m, "definitions", |cx, v| Definitions {
                additional_properties: cx.named_schemas(v),
            }),
            parameters: self.field(m, "parameters", |cx, v| ParameterDefinitions {
                additional_properties: cx
                    .named(v, Self::parameter)
                    .into_iter()
                    .map(|(name, p)| NamedParameter {
                        name,
                        value: Some(p),
                    })
                    .collect(),
            }),
            responses: self.field(m, "responses", |cx, v| ResponseDefinitions {
                additional_properties: cx
                    .named(v, Self::response)
                    .into_iter()
                    .map(|(name, r)| NamedResponse {
                        name,
                        value: Some(r),
                    })
                    .collect(),
            }),
            security: self.list(m, "security", Self::security_requirement),
            security_definitions: self.field(m, "securityDefinitions", Self::security_definitions),
            tags: self.list(m, "tags", Self::tag),
            external_docs: self.field(m, "externalDocs", Self::external_docs),
            vendor_extension: vendor(m),
        }
    }

    fn info(&mut self, v: &Value) -> Info {
        let allowed = [
            "contact",
            "description",
            "license",
            "termsOfService",
            "title",
            "version",
        ];
        let Some(m) = self.object(v, &allowed, &["title", "version"]) else {
            return Info::default();
        };
        Info {
            title: self.string(m, "title"),
            version: self.string(m, "version"),
            description: self.string(m, "description"),
            terms_of_service: self.string(m, "termsOfService"),
            contact: self.field(m, "contact", |cx, v| {
                let Some(m) = cx.object(v, &["email", "name", "url"], &[]) else {
                    return Contact::default();
                };
                Contact {
                    name: cx.string(m, "name"),
                    url: cx.string(m, "url"),
                    email: cx.string(m, "email"),
                    vendor_extension: vendor(m),
                }
            }),
            license: self.field(m, "license", |cx, v| {
                let Some(m) = cx.object(v, &["name", "url"], &["name"]) else {
                    return License::default();
                };
                License {
                    name: cx.string(m, "name"),
                    url: cx.string(m, "url"),
                    vendor_extension: vendor(m),
                }
            }),
            vendor_extension: vendor(m),
        }
    }

    fn external_docs(&mut self, v: &Value) -> ExternalDocs {
        let Some(m) = self.object(v, &["description", "url"], &["url"]) else {
            return ExternalDocs::default();
        };
        ExternalDocs {
            description: self.string(m, "description"),
            url: self.string(m, "url"),
            vendor_extension: vendor(m),
        }
    }

    fn tag(&mut self, v: &Value) -> Tag {
        let Some(m) = self.object(v, &["description", "externalDocs", "name"], &["name"]) else {
            return Tag::default();
        };
        Tag {
            name: self.string(m, "name"),
            description: self.string(m, "description"),
            external_docs: self.field(m, "externalDocs", Self::external_docs),
            vendor_extension: vendor(m),
        }
    }

    fn paths(&mut self, v: &Value) -> Paths {
        let Some(m) = v.as_object() else {
            self.problem(format!("not an object: {v}"));
            return Paths::default();
        };
        let mut path = vec![];
        for (k, v) in m {
            if k.starts_with('/') {
                let value = self.at(k, |cx| cx.path_item(v));
                path.push(NamedPathItem {
                    name: k.clone(),
                    value: Some(value),
                });
            } else if !k.starts_with("x-") {
                self.problem(format!("invalid path {k:?}"));
            }
        }
        Paths {
            vendor_extension: vendor(m),
            path,
        }
    }

    fn path_item(&mut self, v: &Value) -> PathItem {
        let allowed = [
            "$ref",
            "delete",
            "get",
            "head",
            "options",
            "parameters",
            "patch",
            "post",
            "put",
        ];
        let Some(m) = self.object(v, &allowed, &[]) else {
            return PathItem::default();
        };
        PathItem {
            _ref: self.string(m, "$ref"),
            get: self.field(m, "get", Self::operation),
            put: self.field(m, "put", Self::operation),
            post: self.field(m, "post", Self::operation),
            delete: self.field(m, "delete", Self::operation),
            options: self.field(m, "options", Self::operation),
            head: self.field(m, "head", Self::operation),
            patch: self.field(m, "patch", Self::operation),
            parameters: self.list(m, "parameters", Self::parameters_item),
            vendor_extension: vendor(m),
        }
    }

    fn operation(&mut self, v: &Value) -> Operation {
        let allowed = [
            "consumes",
            "deprecated",
            "description",
            "externalDocs",
            "operationId",
            "parameters",
            "produces",
            "responses",
            "schemes",
            "security",
            "summary",
            "tags",
        ];
        let Some(m) = self.object(v, &allowed, &["responses"]) else {
            return Operation::default();
        };
        Operation {
            tags: self.strings(m, "tags"),
            summary: self.string(m, "summary"),
            description: self.string(m, "description"),
            external_docs: self.field(m, "externalDocs", Self::external_docs),
            operation_id: self.string(m, "operationId"),
            produces: self.strings(m, "produces"),
            consumes: self.strings(m, "consumes"),
            parameters: self.list(m, "parameters", Self::parameters_item),
            responses: self.field(m, "responses", Self::responses),
            schemes: self.schemes(m),
            deprecated: self.bool(m, "deprecated"),
            security: self.list(m, "security", Self::security_requirement),
            vendor_extension: vendor(m),
        }
    }

    fn json_reference(&mut self, m: &Map<String, Value>) -> JsonReference {
        JsonReference {
            _ref: self.string(m, "$ref"),
            description: self.string(m, "description"),
        }
    }

    /// A parameter, or (with `$ref`) a reference to one.
    fn parameters_item(&mut self, v: &Value) -> ParametersItem {
        let oneof = match v.as_object() {
            Some(m) if m.contains_key("$ref") => {
                ParametersItemOneof::JsonReference(self.json_reference(m))
            }
            _ => ParametersItemOneof::Parameter(Box::new(self.parameter(v))),
        };
        ParametersItem { oneof: Some(oneof) }
    }

    fn parameter(&mut self, v: &Value) -> Parameter {
        let Some(m) = v.as_object() else {
            self.problem(format!("not an object: {v}"));
            return Parameter::default();
        };
        let location = m.get("in").and_then(Value::as_str).unwrap_or_default();
        if location == "body" {
            let allowed = ["description", "in", "name", "required", "schema"];
            self.object(v, &allowed, &["in", "name", "schema"]);
            let body = BodyParameter {
                description: self.string(m, "description"),
                name: self.string(m, "name"),
                r#in: self.string(m, "in"),
                required: self.bool(m, "required"),
                schema: self.field(m, "schema", Self::schema),
                vendor_extension: vendor(m),
            };
            return Parameter {
                oneof: Some(ParameterOneof::BodyParameter(body)),
            };
        }
        let with_empty_value = matches!(location, "query" | "formData");
        let mut allowed: Vec<&str> = PRIMITIVE_KEYS.to_vec();
        allowed.extend(["description", "in", "name", "required"]);
        if with_empty_value {
            allowed.push("allowEmptyValue");
        }
        let mut required = vec!["in", "name", "type"];
        if location == "path" {
            required.push("required");
        }
        self.object(v, &allowed, &required);
        let mut types = vec!["string", "number", "boolean", "integer", "array"];
        if location == "formData" {
            types.push("file");
        }
        let p = self.primitive(m, &types);
        let (required, r#in, description, name) = (
            self.bool(m, "required"),
            self.string(m, "in"),
            self.string(m, "description"),
            self.string(m, "name"),
        );
        let plain = |p: Primitive| SubSchema {
            required,
            r#in: r#in.clone(),
            description: description.clone(),
            name: name.clone(),
            r#type: p.r#type,
            format: p.format,
            items: p.items,
            collection_format: p.collection_format,
            default: p.default,
            maximum: p.maximum,
            exclusive_maximum: p.exclusive_maximum,
            minimum: p.minimum,
            exclusive_minimum: p.exclusive_minimum,
            max_length: p.max_length,
            min_length: p.min_length,
            pattern: p.pattern,
            max_items: p.max_items,
            min_items: p.min_items,
            unique_items: p.unique_items,
            r#enum: p.r#enum,
            multiple_of: p.multiple_of,
            vendor_extension: p.vendor_extension,
        };
        let allow_empty_value = self.bool(m, "allowEmptyValue");
        let with_empty = |p: Primitive| SubSchemaWithEmptyValue {
            required,
            r#in: r#in.clone(),
            description: description.clone(),
            name: name.clone(),
            allow_empty_value,
            r#type: p.r#type,
            format: p.format,
            items: p.items,
            collection_format: p.collection_format,
            default: p.default,
            maximum: p.maximum,
            exclusive_maximum: p.exclusive_maximum,
            minimum: p.minimum,
            exclusive_minimum: p.exclusive_minimum,
            max_length: p.max_length,
            min_length: p.min_length,
            pattern: p.pattern,
            max_items: p.max_items,
            min_items: p.min_items,
            unique_items: p.unique_items,
            r#enum: p.r#enum,
            multiple_of: p.multiple_of,
            vendor_extension: p.vendor_extension,
        };
        let oneof = match location {
            "header" => NonBodyParameterOneof::Header(plain(p)),
            "formData" => NonBodyParameterOneof::FormData(with_empty(p)),
            "query" => NonBodyParameterOneof::Query(with_empty(p)),
            "path" => NonBodyParameterOneof::Path(plain(p)),
            other => {
                self.problem(format!("in: unexpected value {other:?}"));
                return Parameter::default();
            }
        };
        Parameter {
            oneof: Some(ParameterOneof::NonBodyParameter(NonBodyParameter {
                oneof: Some(oneof),
            })),
        }
    }

    fn primitive(&mut self, m: &Map<String, Value>, types: &[&str]) -> Primitive {
        Primitive {
            r#type: self.enum_string(m, "type", types),
            format: self.string(m, "format"),
            items: self.field(m, "items", Self::primitives_items),
            collection_format: self.enum_string(
                m,
                "collectionFormat",
                &["csv", "ssv", "tsv", "pipes", "multi"],
            ),
            default: m.get("default").map(any),
            maximum: self.float(m, "maximum"),
            exclusive_maximum: self.bool(m, "exclusiveMaximum"),
            minimum: self.float(m, "minimum"),
            exclusive_minimum: self.bool(m, "exclusiveMinimum"),
            max_length: self.int(m, "maxLength"),
            min_length: self.int(m, "minLength"),
            pattern: self.string(m, "pattern"),
            max_items: self.int(m, "maxItems"),
            min_items: self.int(m, "minItems"),
            unique_items: self.bool(m, "uniqueItems"),
            r#enum: self.anys(m, "enum"),
            multiple_of: self.float(m, "multipleOf"),
            vendor_extension: vendor(m),
        }
    }

    fn primitives_items(&mut self, v: &Value) -> PrimitivesItems {
        let Some(m) = self.object(v, PRIMITIVE_KEYS, &[]) else {
            return PrimitivesItems::default();
        };
        let types = ["string", "number", "integer", "boolean", "array"];
        let p = self.primitive(m, &types);
        PrimitivesItems {
            r#type: p.r#type,
            format: p.format,
            items: p.items.map(Box::new),
            collection_format: p.collection_format,
            default: p.default,
            maximum: p.maximum,
            exclusive_maximum: p.exclusive_maximum,
            minimum: p.minimum,
            exclusive_minimum: p.exclusive_minimum,
            max_length: p.max_length,
            min_length: p.min_length,
            pattern: p.pattern,
            max_items: p.max_items,
            min_items: p.min_items,
            unique_items: p.unique_items,
            r#enum: p.r#enum,
            multiple_of: p.multiple_of,
            vendor_extension: p.vendor_extension,
        }
    }

    fn responses(&mut self, v: &Value) -> Responses {
        let Some(m) = v.as_object() else {
            self.problem(format!("not an object: {v}"));
            return Responses::default();
        };
        let mut response_code = vec![];
        for (k, v) in m {
            let code = k.len() == 3 && k.bytes().all(|b| b.is_ascii_digit());
            if code || k == "default" {
                let value = self.at(k, |cx| cx.response_value(v));
                response_code.push(NamedResponseValue {
                    name: k.clone(),
                    value: Some(value),
                });
            } else if !k.starts_with("x-") {
                self.problem(format!("invalid response code {k:?}"));
            }
        }
        Responses {
            response_code,
            vendor_extension: vendor(m),
        }
    }

    fn response_value(&mut self, v: &Value) -> ResponseValue {
        let oneof = match v.as_object() {
            Some(m) if m.contains_key("$ref") => {
                ResponseValueOneof::JsonReference(self.json_reference(m))
            }
            _ => ResponseValueOneof::Response(Box::new(self.response(v))),
        };
        ResponseValue { oneof: Some(oneof) }
    }

    fn response(&mut self, v: &Value) -> Response {
        let allowed = ["description", "examples", "headers", "schema"];
        let Some(m) = self.object(v, &allowed, &["description"]) else {
            return Response::default();
        };
        if m.contains_key("headers") {
            self.problem("headers: not converted".into());
        }
        Response {
            description: self.string(m, "description"),
            schema: self.field(m, "schema", |cx, v| {
                if v.get("type").and_then(Value::as_str) == Some("file") {
                    cx.problem("a file schema: not converted".into());
                }
                SchemaItem {
                    schema: Some(cx.schema(v)),
                }
            }),
            examples: self.field(m, "examples", |cx, v| Examples {
                additional_properties: cx
                    .named(v, |_, v| any(v))
                    .into_iter()
                    .map(|(name, a)| NamedAny {
                        name,
                        value: Some(a),
                    })
                    .collect(),
            }),
            vendor_extension: vendor(m),
        }
    }

    fn named_schemas(&mut self, v: &Value) -> Vec<NamedSchema> {
        self.named(v, Self::schema)
            .into_iter()
            .map(|(name, s)| NamedSchema {
                name,
                value: Some(s),
            })
            .collect()
    }

    fn schema(&mut self, v: &Value) -> Schema {
        const ALLOWED: &[&str] = &[
            "$ref",
            "additionalProperties",
            "allOf",
            "default",
            "description",
            "discriminator",
            "enum",
            "example",
            "exclusiveMaximum",
            "exclusiveMinimum",
            "externalDocs",
            "format",
            "items",
            "maxItems",
            "maxLength",
            "maxProperties",
            "maximum",
            "minItems",
            "minLength",
            "minProperties",
            "minimum",
            "multipleOf",
            "pattern",
            "properties",
            "readOnly",
            "required",
            "title",
            "type",
            "uniqueItems",
            "xml",
        ];
        let Some(m) = self.object(v, ALLOWED, &[]) else {
            return Schema::default();
        };
        Schema {
            _ref: self.string(m, "$ref"),
            format: self.string(m, "format"),
            title: self.string(m, "title"),
            description: self.string(m, "description"),
            default: m.get("default").map(any),
            multiple_of: self.float(m, "multipleOf"),
            maximum: self.float(m, "maximum"),
            exclusive_maximum: self.bool(m, "exclusiveMaximum"),
            minimum: self.float(m, "minimum"),
            exclusive_minimum: self.bool(m, "exclusiveMinimum"),
            max_length: self.int(m, "maxLength"),
            min_length: self.int(m, "minLength"),
            pattern: self.string(m, "pattern"),
            max_items: self.int(m, "maxItems"),
            min_items: self.int(m, "minItems"),
            unique_items: self.bool(m, "uniqueItems"),
            max_properties: self.int(m, "maxProperties"),
            min_properties: self.int(m, "minProperties"),
            required: self.strings(m, "required"),
            r#enum: self.anys(m, "enum"),
            additional_properties: self.field(m, "additionalProperties", |cx, v| {
                let oneof = match v {
                    Value::Bool(b) => AdditionalPropertiesOneof::Boolean(*b),
                    v => AdditionalPropertiesOneof::Schema(Box::new(cx.schema(v))),
                };
                AdditionalPropertiesItem { oneof: Some(oneof) }
            }),
            r#type: m.get("type").map(|t| TypeItem {
                // gnostic keeps a scalar's text, or the scalar items of a list.
                value: match t {
                    Value::Array(items) => items.iter().filter_map(scalar_text).collect(),
                    t => scalar_text(t).into_iter().collect(),
                },
            }),
            items: self.field(m, "items", |cx, v| ItemsItem {
                // gnostic reads a list of schemas as one empty schema.
                schema: vec![match v {
                    Value::Array(_) => Schema::default(),
                    v => cx.schema(v),
                }],
            }),
            all_of: self.list(m, "allOf", Self::schema),
            properties: self.field(m, "properties", |cx, v| Properties {
                additional_properties: cx.named_schemas(v),
            }),
            discriminator: self.string(m, "discriminator"),
            read_only: self.bool(m, "readOnly"),
            xml: self.field(m, "xml", |cx, v| {
                let allowed = ["attribute", "name", "namespace", "prefix", "wrapped"];
                let Some(m) = cx.object(v, &allowed, &[]) else {
                    return Xml::default();
                };
                Xml {
                    name: cx.string(m, "name"),
                    namespace: cx.string(m, "namespace"),
                    prefix: cx.string(m, "prefix"),
                    attribute: cx.bool(m, "attribute"),
                    wrapped: cx.bool(m, "wrapped"),
                    vendor_extension: vendor(m),
                }
            }),
            external_docs: self.field(m, "externalDocs", Self::external_docs),
            example: m.get("example").map(any),
            vendor_extension: vendor(m),
        }
    }

    fn security_requirement(&mut self, v: &Value) -> SecurityRequirement {
        SecurityRequirement {
            additional_properties: self
                .named(v, |_, v| StringArray {
                    value: match v {
                        Value::Array(items) => items
                            .iter()
                            .map(|i| string_for_scalar(i).unwrap_or_default())
                            .collect(),
                        _ => vec![],
                    },
                })
                .into_iter()
                .map(|(name, a)| NamedStringArray {
                    name,
                    value: Some(a),
                })
                .collect(),
        }
    }

    fn security_definitions(&mut self, v: &Value) -> SecurityDefinitions {
        let items = self.named(v, |cx, v| {
            let oneof = match v.get("type").and_then(Value::as_str) {
                Some("basic") => {
                    let m = cx.object(v, &["description", "type"], &["type"])?;
                    SecurityDefinitionsOneof::BasicAuthenticationSecurity(
                        BasicAuthenticationSecurity {
                            r#type: cx.string(m, "type"),
                            description: cx.string(m, "description"),
                            vendor_extension: vendor(m),
                        },
                    )
                }
                Some("apiKey") => {
                    let allowed = ["description", "in", "name", "type"];
                    let m = cx.object(v, &allowed, &["in", "name", "type"])?;
                    SecurityDefinitionsOneof::ApiKeySecurity(ApiKeySecurity {
                        r#type: cx.string(m, "type"),
                        name: cx.string(m, "name"),
                        r#in: cx.enum_string(m, "in", &["header", "query"]),
                        description: cx.string(m, "description"),
                        vendor_extension: vendor(m),
                    })
                }
                _ => {
                    cx.problem("a security definition other than basic or apiKey".into());
                    return None;
                }
            };
            Some(SecurityDefinitionsItem { oneof: Some(oneof) })
        });
        SecurityDefinitions {
            additional_properties: items
                .into_iter()
                .map(|(name, value)| NamedSecurityDefinitionsItem { name, value })
                .collect(),
        }
    }
}

/// gnostic's `StringForScalarNode` on a JSON value: strings, integers (their text), null ("").
fn string_for_scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Null => Some(String::new()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        _ => None,
    }
}

/// A YAML scalar node's text, as gnostic's `TypeItem` reads it.
fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null => Some("null".into()),
        _ => None,
    }
}

#[cfg(test)]
mod tests;

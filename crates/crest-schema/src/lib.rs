//! Structural OpenAPI v3 schemas of CustomResourceDefinitions (apiextensions-apiserver's
//! `pkg/apiserver/schema`): compiled once per CRD version, then used for every request to prune,
//! default and validate custom resources. No HTTP, no storage: pure functions over
//! `serde_json::Value`.

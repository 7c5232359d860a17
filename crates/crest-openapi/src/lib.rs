//! OpenAPI documents.

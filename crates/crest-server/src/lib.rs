//! The Crest API server.

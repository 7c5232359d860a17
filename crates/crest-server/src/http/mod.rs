//! The HTTP front: routing of every path, body limits, and rendering of responses and errors.
//! Resource requests are handed to [`handlers`].

pub(crate) mod app;
pub(crate) mod handlers;
pub(crate) mod http1;
pub(crate) mod openapi;
pub(crate) mod render;
pub(crate) mod request;
pub(crate) mod request_body;
pub(crate) mod router;
pub(crate) mod server;
pub(crate) mod watch;

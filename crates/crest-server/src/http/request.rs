//! Parsing of API paths (kube-apiserver's RequestInfo).

/// What a resource path addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ResourcePath {
    pub group: String,
    pub version: String,
    pub namespace: Option<String>,
    pub resource: String,
    pub name: Option<String>,
    pub subresource: Option<String>,
    /// Under the deprecated `watch/` prefix (`/api/v1/watch/namespaces/NS/configmaps[/NAME]`),
    /// which upstream still serves in 1.32 as a watch of the list (of the one object named).
    pub watch: bool,
}

/// A parsed API path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ApiPath {
    /// `/api` or `/apis`.
    Root {
        core: bool,
    },
    /// `/apis/G`.
    Group(String),
    /// `/api/v1`, `/apis/G/V`.
    GroupVersion {
        group: String,
        version: String,
    },
    Resource(ResourcePath),
}

/// Parses `/api/...` and `/apis/...` paths; `None` for anything else. The path is decoded
/// before it is split, as upstream's RequestInfo splits `req.URL.Path` (an escaped `/` inside a
/// segment separates segments too), so routing sees what authorization saw.
pub(crate) fn parse_api_path(path: &str) -> Option<ApiPath> {
    let decoded = percent_encoding::percent_decode_str(path).decode_utf8_lossy();
    let trimmed = decoded.trim_end_matches('/');
    let parts: Vec<String> = trimmed.split('/').skip(1).map(str::to_string).collect();
    let (group, version, rest) = match parts.first().map(String::as_str) {
        Some("api") => match parts.len() {
            1 => return Some(ApiPath::Root { core: true }),
            _ => (String::new(), parts[1].clone(), &parts[2..]),
        },
        Some("apis") => match parts.len() {
            1 => return Some(ApiPath::Root { core: false }),
            2 => return Some(ApiPath::Group(parts[1].clone())),
            _ => (parts[1].clone(), parts[2].clone(), &parts[3..]),
        },
        _ => return None,
    };
    if rest.is_empty() {
        return Some(ApiPath::GroupVersion { group, version });
    }
    let watch = rest[0] == "watch";
    let rest = if watch { &rest[1..] } else { rest };
    if rest.is_empty() {
        return None;
    }
    let is_namespace_sub = |p: &[String]| p.len() == 3 && (p[2] == "status" || p[2] == "finalize");
    let (namespace, rest) = if rest[0] == "namespaces" && rest.len() >= 3 && !is_namespace_sub(rest)
    {
        (Some(rest[1].clone()), &rest[2..])
    } else {
        (None, rest)
    };
    if rest.len() > 3 || rest.iter().any(String::is_empty) {
        return None;
    }
    Some(ApiPath::Resource(ResourcePath {
        group,
        version,
        namespace,
        resource: rest[0].clone(),
        name: rest.get(1).cloned(),
        subresource: rest.get(2).cloned(),
        watch,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(p: &str) -> ResourcePath {
        match parse_api_path(p) {
            Some(ApiPath::Resource(r)) => r,
            other => panic!("{p}: {other:?}"),
        }
    }

    #[test]
    fn paths() {
        assert_eq!(parse_api_path("/api"), Some(ApiPath::Root { core: true }));
        assert_eq!(
            parse_api_path("/apis/"),
            Some(ApiPath::Root { core: false })
        );
        let r = res("/apis/stable.example.com/v1/namespaces/default/crontabs/x");
        assert_eq!(
            (
                r.namespace.as_deref(),
                r.resource.as_str(),
                r.name.as_deref()
            ),
            (Some("default"), "crontabs", Some("x"))
        );
        let r = res("/api/v1/namespaces/foo");
        assert_eq!(
            (r.namespace, r.resource.as_str(), r.name.as_deref()),
            (None, "namespaces", Some("foo"))
        );
        let r = res("/api/v1/namespaces/foo/status");
        assert_eq!(
            (r.name.as_deref(), r.subresource.as_deref()),
            (Some("foo"), Some("status"))
        );
        let r = res("/apis/g.io/v1/crontabs");
        assert_eq!((r.namespace, r.name), (None, None));
        assert_eq!(parse_api_path("/version"), None);
    }
}

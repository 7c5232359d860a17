"""A kopf operator that records an Event about each CronTab it sees (crates/crest/tests/events.rs
runs it with `kopf run --standalone`)."""

import kopf


@kopf.on.create("stable.example.com", "v1", "crontabs")
def created(body, **_):
    kopf.info(body, reason="CronTabSeen", message=f"kopf saw {body['metadata']['name']}")

//! The storagemigration.k8s.io group's built-in kinds (upstream pkg/registry/storagemigration).

pub(crate) mod storageversionmigration;

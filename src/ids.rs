//! Typed ids: no bare integers cross module borders.

use serde::Serialize;

macro_rules! id_type {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(transparent)]
        pub struct $name(pub i64);

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

id_type!(
    /// A user or a group (the ACS "parties" model).
    PartyId
);
id_type!(CollectionId);
id_type!(ItemId);
id_type!(ModificationId);
id_type!(SubscriptionId);
id_type!(
    /// An `nt_requests` row.
    RequestId
);

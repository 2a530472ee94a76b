//! What an agent keeps of its subordinates: the one kept between `call_subordinate` calls, and
//! the scopes of the profiles they may run on.

use std::collections::BTreeMap;
use std::sync::Arc;

use hookpoint::Scope;

use super::Agent;

/// The subordinate an agent keeps between calls (Agent Zero's `_subordinate`), with its profile.
pub(crate) struct Kept {
    pub(crate) profile: String,
    pub(crate) agent: Agent,
}

/// The scopes of the profiles subordinates may run on, shared so subordinates inherit them.
pub(crate) type ProfileScopes = Arc<BTreeMap<String, Scope>>;

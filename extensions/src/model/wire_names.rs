//! The names tools go by on the wire of an OpenAI-compatible endpoint.
//!
//! OpenAI takes a function name only if it matches `^[a-zA-Z0-9_-]{1,64}$`, while tools here
//! are named freely (`db.search`, an MCP server's `server.tool`). For one request,
//! [`WireNames`] gives each name a wire name: a valid name is kept as it is; another has each
//! character outside the set replaced by `_` and is cut to 64 characters, and when that is
//! already taken (by another tool's real name, or by the wire name of a tool before it) a
//! short suffix from a hash of the real name makes it unique. The same names in the same
//! order always get the same wire names. The calls that come back are translated to the real
//! names; a wire name not in the table is left as it is.

use std::collections::{HashMap, HashSet};

/// The longest function name OpenAI takes.
const MAX_LEN: usize = 64;

/// One request's table of real tool names and their wire names, both ways.
#[derive(Debug, Clone, Default)]
pub(crate) struct WireNames {
    to_wire: HashMap<String, String>,
    to_real: HashMap<String, String>,
}

/// True if OpenAI takes `name` as a function name.
fn is_valid(name: &str) -> bool {
    (1..=MAX_LEN).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `name` with each character outside the set as `_`, at most `max` characters, never empty.
fn sanitize(name: &str, max: usize) -> String {
    let out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(max)
        .collect();
    if out.is_empty() { "_".into() } else { out }
}

/// A hash of `name` that is the same on every run and platform (FNV-1a, 32 bits).
fn stable_hash(name: &str) -> u32 {
    name.bytes().fold(0x811c_9dc5, |h: u32, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

impl WireNames {
    /// The table for `names` (a tool list, then any other names the request carries), in that
    /// order: a name seen twice is one entry.
    pub(crate) fn new<'a>(names: impl IntoIterator<Item = &'a str>) -> Self {
        let mut order: Vec<&str> = Vec::new();
        let mut seen = HashSet::new();
        for n in names {
            if seen.insert(n) {
                order.push(n);
            }
        }
        // Valid names keep themselves, so they are taken before any other is placed.
        let mut taken: HashSet<String> = order
            .iter()
            .filter(|n| is_valid(n))
            .map(|n| (*n).to_owned())
            .collect();
        let mut table = WireNames::default();
        for real in order {
            let wire = if is_valid(real) {
                real.to_owned()
            } else {
                let wire = Self::unique(real, &taken);
                taken.insert(wire.clone());
                wire
            };
            table.to_real.insert(wire.clone(), real.to_owned());
            table.to_wire.insert(real.to_owned(), wire);
        }
        table
    }

    /// A wire name for the invalid `real` that is not in `taken`.
    fn unique(real: &str, taken: &HashSet<String>) -> String {
        let plain = sanitize(real, MAX_LEN);
        if !taken.contains(&plain) {
            return plain;
        }
        let hash = stable_hash(real);
        (0u32..)
            .map(|bump| {
                let suffix = format!("_{:06x}", hash.wrapping_add(bump) & 0xff_ffff);
                format!("{}{suffix}", sanitize(real, MAX_LEN - suffix.len()))
            })
            .find(|w| !taken.contains(w))
            .expect("a free suffix")
    }

    /// The wire name of `real` (as it is when the table does not have it).
    pub(crate) fn wire<'a>(&'a self, real: &'a str) -> &'a str {
        self.to_wire.get(real).map_or(real, String::as_str)
    }

    /// The real name of `wire` (as it is when the table does not have it).
    pub(crate) fn real<'a>(&'a self, wire: &'a str) -> &'a str {
        self.to_real.get(wire).map_or(wire, String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dotted_name_gets_underscores_and_comes_back() {
        let names = WireNames::new(["db.search", "mcp server/tool"]);
        assert_eq!(names.wire("db.search"), "db_search");
        assert_eq!(names.wire("mcp server/tool"), "mcp_server_tool");
        assert_eq!(names.real("db_search"), "db.search");
        assert_eq!(names.real("mcp_server_tool"), "mcp server/tool");
    }

    #[test]
    fn a_valid_name_is_sent_as_it_is() {
        let names = WireNames::new(["calculator", "code-run_2"]);
        assert_eq!(names.wire("calculator"), "calculator");
        assert_eq!(names.wire("code-run_2"), "code-run_2");
        assert_eq!(names.real("calculator"), "calculator");
        // A valid name keeps its name even when a name before it sanitises to it.
        let names = WireNames::new(["code.run-2", "code_run-2"]);
        assert_eq!(names.wire("code_run-2"), "code_run-2");
        assert_ne!(names.wire("code.run-2"), "code_run-2");
    }

    #[test]
    fn a_taken_suffix_is_passed_over() {
        let first = WireNames::unique("db.search", &HashSet::from(["db_search".to_owned()]));
        assert!(first.starts_with("db_search_"), "{first}");
        let taken = HashSet::from(["db_search".to_owned(), first.clone()]);
        let second = WireNames::unique("db.search", &taken);
        assert!(
            second.starts_with("db_search_") && is_valid(&second),
            "{second}"
        );
        assert_ne!(first, second);
    }

    #[test]
    fn a_name_too_long_is_cut_to_64() {
        let long = format!("server.{}", "x".repeat(100));
        let names = WireNames::new([long.as_str()]);
        let wire = names.wire(&long);
        assert_eq!(wire.len(), 64);
        assert!(wire.starts_with("server_xxx"), "{wire}");
        assert!(is_valid(wire));
        assert_eq!(names.real(wire), long);
        // A valid name one character too long is cut too.
        let too_long = "y".repeat(65);
        let names = WireNames::new([too_long.as_str()]);
        assert_eq!(names.wire(&too_long), "y".repeat(64));
    }

    #[test]
    fn names_that_collide_after_sanitising_get_distinct_wire_names() {
        let names = WireNames::new(["db.search", "db/search", "db_search"]);
        // `db_search` is valid and keeps its name; the two others get a suffix each.
        assert_eq!(names.wire("db_search"), "db_search");
        let (a, b) = (names.wire("db.search"), names.wire("db/search"));
        assert!(
            a.starts_with("db_search_") && b.starts_with("db_search_"),
            "{a} {b}"
        );
        assert_ne!(a, b);
        assert!(is_valid(a) && is_valid(b));
        assert_eq!(
            (names.real(a), names.real(b), names.real("db_search")),
            ("db.search", "db/search", "db_search")
        );
        // The suffix is the same on every run and platform.
        let pair = WireNames::new(["db.search", "db_search"]);
        assert_eq!(pair.wire("db.search"), "db_search_4a0317");
        // The same names give the same wire names.
        let again = WireNames::new(["db.search", "db/search", "db_search"]);
        assert_eq!((again.wire("db.search"), again.wire("db/search")), (a, b));
        // Two long names equal in their first 64 characters.
        let (x, y) = (
            format!("{}.a", "z".repeat(70)),
            format!("{}.b", "z".repeat(70)),
        );
        let names = WireNames::new([x.as_str(), y.as_str()]);
        assert_ne!(names.wire(&x), names.wire(&y));
        assert!(is_valid(names.wire(&x)) && is_valid(names.wire(&y)));
    }

    #[test]
    fn every_name_round_trips_and_an_unknown_wire_name_passes() {
        let real = ["db.search", "db_search", "a b", "a_b", "", "über", "ok"];
        let names = WireNames::new(real);
        let wires: HashSet<&str> = real.iter().map(|r| names.wire(r)).collect();
        assert_eq!(wires.len(), real.len(), "distinct: {wires:?}");
        for r in real {
            assert!(is_valid(names.wire(r)), "{r:?} -> {}", names.wire(r));
            assert_eq!(names.real(names.wire(r)), r);
        }
        assert_eq!(names.real("never_offered"), "never_offered");
        assert_eq!(names.wire("not.in.table"), "not.in.table");
    }
}

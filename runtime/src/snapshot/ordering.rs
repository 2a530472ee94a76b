//! Ordering constraints: `after = "x"` / `before = "y"` move an extension relative to others of
//! the same point, after the numeric order. An extension that must run before others takes the
//! earliest numeric place among them (it moves up to just before the first one); everything else
//! keeps its numeric order. Formally: each extension's key is the smallest numeric position
//! among itself and every extension that must (transitively) run after it, and the result is
//! the topological order that always takes the ready extension with the smallest (key,
//! position). A constraint naming an extension the point does not have is ignored here
//! (`validate()` reports it for compiled-in extensions); a cycle leaves its members in numeric
//! order and is reported.

use std::sync::Arc;

use super::Candidate;

/// Reorders `cands` (already in numeric order) by their constraints. Returns the names of a
/// cycle, if the constraints contain one.
pub(crate) fn apply(cands: &mut Vec<Candidate>) -> Option<Vec<Arc<str>>> {
    if cands
        .iter()
        .all(|c| c.meta.after.is_empty() && c.meta.before.is_empty())
    {
        return None;
    }
    let edges = edges(cands);
    let n = cands.len();
    let mut indegree = vec![0usize; n];
    for targets in &edges {
        for &t in targets {
            indegree[t] += 1;
        }
    }
    let keys = keys(&edges);
    let mut placed = vec![false; n];
    let mut order = Vec::with_capacity(n);
    while order.len() < n {
        let Some(next) = (0..n)
            .filter(|&i| !placed[i] && indegree[i] == 0)
            .min_by_key(|&i| (keys[i], i))
        else {
            break;
        };
        placed[next] = true;
        order.push(next);
        for &t in &edges[next] {
            indegree[t] -= 1;
        }
    }
    let cycle = (order.len() < n).then(|| find_cycle(&edges, &placed, cands));
    order.extend((0..n).filter(|&i| !placed[i]));
    let mut taken: Vec<Option<Candidate>> = cands.drain(..).map(Some).collect();
    cands.extend(order.into_iter().filter_map(|i| taken[i].take()));
    cycle
}

/// `keys[i]`: the smallest position among `i` and everything that must run after it.
fn keys(edges: &[Vec<usize>]) -> Vec<usize> {
    fn visit(
        i: usize,
        edges: &[Vec<usize>],
        keys: &mut [Option<usize>],
        on_path: &mut [bool],
    ) -> usize {
        if let Some(k) = keys[i] {
            return k;
        }
        if on_path[i] {
            return i; // a cycle: its members keep their own position
        }
        on_path[i] = true;
        let mut k = i;
        for &t in &edges[i] {
            k = k.min(visit(t, edges, keys, on_path));
        }
        on_path[i] = false;
        keys[i] = Some(k);
        k
    }
    let mut keys = vec![None; edges.len()];
    let mut on_path = vec![false; edges.len()];
    (0..edges.len())
        .map(|i| visit(i, edges, &mut keys, &mut on_path))
        .collect()
}

/// `edges[i]`: the extensions that must run after extension `i`.
fn edges(cands: &[Candidate]) -> Vec<Vec<usize>> {
    let index = |name: &str| cands.iter().position(|c| &*c.meta.name == name);
    let mut edges = vec![Vec::new(); cands.len()];
    for (i, c) in cands.iter().enumerate() {
        for j in c.meta.after.iter().filter_map(|n| index(n)) {
            if j != i && !edges[j].contains(&i) {
                edges[j].push(i);
            }
        }
        for k in c.meta.before.iter().filter_map(|n| index(n)) {
            if k != i && !edges[i].contains(&k) {
                edges[i].push(k);
            }
        }
    }
    edges
}

/// One cycle among the unplaced extensions, as names, first repeated at the end (`a, b, a`).
fn find_cycle(edges: &[Vec<usize>], placed: &[bool], cands: &[Candidate]) -> Vec<Arc<str>> {
    let start = placed.iter().position(|p| !p).unwrap_or(0);
    let mut path = vec![start];
    let mut at = start;
    while let Some(&next) = edges[at].iter().find(|&&t| !placed[t]) {
        if let Some(pos) = path.iter().position(|&p| p == next) {
            let mut cycle: Vec<Arc<str>> = path[pos..]
                .iter()
                .map(|&i| cands[i].meta.name.clone())
                .collect();
            cycle.push(cands[next].meta.name.clone());
            return cycle;
        }
        path.push(next);
        at = next;
    }
    path.iter().map(|&i| cands[i].meta.name.clone()).collect()
}

//! Ordering constraints: `after = "x"` / `before = "y"` move an extension relative to others of
//! the same point, after the numeric order. An extension that must run before others takes the
//! earliest numeric place among them (it moves up to just before the first one); everything else
//! keeps its numeric order. Formally: each extension's key is the smallest numeric position
//! among itself and every extension that must (transitively) run after it, and the result is
//! the topological order that always takes the ready extension with the smallest (key,
//! position). A constraint naming an extension the point does not have is ignored here
//! (`validate()` reports it for compiled-in extensions); a cycle leaves its members in their
//! numeric places (the constraints among them are dropped; those linking them to other
//! extensions still apply) and is reported.

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
    let mut edges = edges(cands);
    let n = cands.len();
    // A cycle's members keep their numeric places: the constraints among them are dropped (the
    // ones linking them to the rest still apply), and the first cycle is reported.
    let component = components(&edges);
    let cyclic = (0..n).find(|&i| edges[i].iter().any(|&t| component[t] == component[i]));
    let cycle = cyclic.map(|i| {
        let outside: Vec<bool> = component.iter().map(|&c| c != component[i]).collect();
        find_cycle(&edges, &outside, cands)
    });
    for (i, targets) in edges.iter_mut().enumerate() {
        targets.retain(|&t| component[t] != component[i]);
    }
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
    // Without cycles every extension was placed; this only guards the invariant.
    order.extend((0..n).filter(|&i| !placed[i]));
    let mut taken: Vec<Option<Candidate>> = cands.drain(..).map(Some).collect();
    cands.extend(order.into_iter().filter_map(|i| taken[i].take()));
    cycle
}

/// The strongly connected component of each extension in the constraint graph (Tarjan): two
/// extensions share one exactly when each must (transitively) run after the other.
fn components(edges: &[Vec<usize>]) -> Vec<usize> {
    struct Tarjan<'a> {
        edges: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        component: Vec<usize>,
        components: usize,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.next);
            self.low[v] = self.next;
            self.next += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for &w in &self.edges[v] {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                while let Some(w) = self.stack.pop() {
                    self.on_stack[w] = false;
                    self.component[w] = self.components;
                    if w == v {
                        break;
                    }
                }
                self.components += 1;
            }
        }
    }
    let n = edges.len();
    let mut t = Tarjan {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        component: vec![0; n],
        components: 0,
    };
    for v in 0..n {
        if t.index[v].is_none() {
            t.visit(v);
        }
    }
    t.component
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

/// One cycle among the extensions not `placed` (one strongly connected component), as names,
/// first repeated at the end (`a, b, a`).
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

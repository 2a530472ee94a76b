//! One embedding model's vectors as a store read them, kept in memory while the database is
//! unchanged (SQLite: `PRAGMA data_version`; PostgreSQL: the namespace's change counter) and
//! scanned for recall by meaning.

use hookpoint_extensions::payloads::MemoryKind;

use crate::embedder::cosine;

/// One model's vectors as read from the database: `ids[i]` and `kinds[i]` belong to
/// `flat[i * dim..(i + 1) * dim]`.
pub(crate) struct VectorCache {
    model: String,
    version: i64,
    /// The last change (SQLite's `vector_changes.seq`) this cache has applied.
    pub(crate) seq: i64,
    dim: usize,
    ids: Vec<i64>,
    kinds: Vec<MemoryKind>,
    flat: Vec<f32>,
}

impl VectorCache {
    /// An empty cache for `model` at the database's `version` (SQLite's `PRAGMA data_version`,
    /// PostgreSQL's change counter).
    pub(crate) fn new(model: &str, version: i64) -> VectorCache {
        VectorCache {
            model: model.to_owned(),
            version,
            seq: 0,
            dim: 0,
            ids: Vec::new(),
            kinds: Vec::new(),
            flat: Vec::new(),
        }
    }

    /// Whether this cache holds `model`'s vectors at the database's `version`.
    pub(crate) fn is_for(&self, model: &str, version: i64) -> bool {
        self.model == model && self.version == version
    }

    /// The embedding model whose vectors these are.
    pub(crate) fn model_name(&self) -> &str {
        &self.model
    }

    /// Whether this cache holds `model`'s vectors, at whatever version.
    pub(crate) fn is_of(&self, model: &str) -> bool {
        self.model == model
    }

    /// The database's version this cache is up to date with.
    pub(crate) fn version(&self) -> i64 {
        self.version
    }

    /// Marks the cache as up to date with the database's `version`.
    pub(crate) fn set_version(&mut self, version: i64) {
        self.version = version;
    }

    /// Drops memory `id`'s vector, if the cache holds one (the last one takes its place).
    pub(crate) fn remove(&mut self, id: i64) {
        let Some(at) = self.ids.iter().position(|i| *i == id) else {
            return;
        };
        let last = self.ids.len() - 1;
        self.ids.swap_remove(at);
        self.kinds.swap_remove(at);
        if at != last {
            let (dim, flat) = (self.dim, &mut self.flat);
            flat.copy_within(last * dim..(last + 1) * dim, at * dim);
        }
        self.flat.truncate(last * self.dim);
    }

    /// Adds one memory's vector, a little-endian `f32` blob of `dim` values; the first vector
    /// fixes the dimension and a vector of another dimension or a malformed blob is skipped.
    pub(crate) fn push(&mut self, id: i64, kind: MemoryKind, dim: usize, blob: &[u8]) {
        if !self.admits(dim) || blob.len() != dim * 4 {
            return;
        }
        self.ids.push(id);
        self.kinds.push(kind);
        from_blob(blob, &mut self.flat);
    }

    /// Adds one memory's vector; the first vector fixes the dimension and a vector of another
    /// dimension is skipped.
    pub(crate) fn push_vector(&mut self, id: i64, kind: MemoryKind, vector: &[f32]) {
        if !self.admits(vector.len()) {
            return;
        }
        self.ids.push(id);
        self.kinds.push(kind);
        self.flat.extend_from_slice(vector);
    }

    /// Whether a vector of `dim` fits (the first one fixes the dimension).
    fn admits(&mut self, dim: usize) -> bool {
        if self.dim == 0 {
            self.dim = dim;
        }
        dim == self.dim
    }

    /// The ids and cosine similarities of the `limit` vectors most similar to `query` (of
    /// `kind` when given, at least `threshold`), best first; none when the dimensions differ.
    pub(crate) fn best(
        &self,
        query: &[f32],
        kind: Option<MemoryKind>,
        limit: usize,
        threshold: f32,
    ) -> Vec<(i64, f32)> {
        if self.dim != query.len() {
            return Vec::new();
        }
        let mut scored: Vec<(i64, f32)> = self
            .flat
            .chunks_exact(self.dim.max(1))
            .zip(self.ids.iter().zip(&self.kinds))
            .filter(|(_, (_, k))| kind.is_none_or(|want| **k == want))
            .map(|(v, (id, _))| (*id, cosine(v, query)))
            .filter(|(_, s)| *s >= threshold)
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        scored.truncate(limit);
        scored
    }
}

/// A vector as the database stores it: little-endian `f32`s.
pub(crate) fn to_blob(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_blob(blob: &[u8], into: &mut Vec<f32>) {
    into.extend(
        blob.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removing_a_vector_keeps_the_others_with_their_ids() {
        let mut cache = VectorCache::new("m", 0);
        for (id, v) in [(1, [1.0, 0.0]), (2, [0.0, 1.0]), (3, [0.7, 0.7])] {
            cache.push_vector(id, MemoryKind::Fragment, &v);
        }
        cache.remove(1);
        cache.remove(9);
        let best = cache.best(&[1.0, 0.0], None, 5, -1.0);
        let ids: Vec<i64> = best.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids, [3, 2]);
        cache.remove(2);
        cache.remove(3);
        assert!(cache.best(&[1.0, 0.0], None, 5, -1.0).is_empty());
        cache.push_vector(4, MemoryKind::Lesson, &[0.0, 1.0]);
        assert_eq!(cache.best(&[0.0, 1.0], None, 5, 0.9)[0].0, 4);
    }
}

//! The behaviour every [`MemoryStore`] shows, run against each store: storing once per kind and
//! text, word search, pages, deletion, vectors (one dimension per model, refused with nothing
//! written), recall by meaning, the switch of model, and concurrent writers losing nothing.

use std::sync::Arc;

use hookpoint_extensions::payloads::MemoryKind;
use hookpoint_plugin_memory::{MemoryStore, StoreError};

/// Runs every check on `store`, which must be empty.
pub fn run(store: Arc<dyn MemoryStore>) {
    assert_eq!(
        store.count(None).unwrap(),
        0,
        "the suite needs an empty store"
    );
    stores_once_per_kind_and_text(store.as_ref());
    searches_by_words(store.as_ref());
    lists_newest_first_and_deletes(store.as_ref());
    vectors(store.as_ref());
    switches_models(store.as_ref());
    concurrent_writers_lose_nothing(&store);
}

fn stores_once_per_kind_and_text(store: &dyn MemoryStore) {
    let a = store
        .add(MemoryKind::Fragment, "  My name is Ada ", "", "ada")
        .unwrap();
    let again = store
        .add(MemoryKind::Fragment, "My name is Ada", "", "ada")
        .unwrap();
    assert!(a.is_some());
    assert_eq!(a, again, "the same kind and text is one memory");
    let other = store
        .add(MemoryKind::Lesson, "My name is Ada", "t", "ada")
        .unwrap();
    assert_ne!(a, other, "another kind is another memory");
    assert_eq!(
        store.add(MemoryKind::Fragment, "   ", "", "ada").unwrap(),
        None
    );
    assert_eq!(store.count(None).unwrap(), 2);
    assert_eq!(store.count(Some(MemoryKind::Lesson)).unwrap(), 1);
    let lesson = &store.list(Some(MemoryKind::Lesson), 0, 5).unwrap()[0];
    assert_eq!((lesson.tool.as_str(), lesson.agent.as_str()), ("t", "ada"));
}

fn searches_by_words(store: &dyn MemoryStore) {
    store
        .add(MemoryKind::Fragment, "I prefer metric units", "", "ada")
        .unwrap();
    let hits = store.search("which units do I prefer?", None, 5).unwrap();
    assert_eq!(hits[0].text, "I prefer metric units");
    let names = store
        .search("what is my name", Some(MemoryKind::Lesson), 5)
        .unwrap();
    assert_eq!(names.len(), 1);
    assert_eq!(names[0].kind, MemoryKind::Lesson);
    assert!(
        store.search("is it?", None, 5).unwrap().is_empty(),
        "no searchable word"
    );
    assert!(store.search("zanzibar", None, 5).unwrap().is_empty());
    assert_eq!(
        store.search("name units", None, 1).unwrap().len(),
        1,
        "the limit holds"
    );
}

fn lists_newest_first_and_deletes(store: &dyn MemoryStore) {
    std::thread::sleep(std::time::Duration::from_millis(5));
    let id = store
        .add(MemoryKind::Solution, "Task: x\nAnswer: y", "", "ada")
        .unwrap()
        .unwrap();
    let page = store.list(None, 0, 2).unwrap();
    assert_eq!(page[0].id, id, "newest first");
    assert_eq!(store.list(None, 1, 10).unwrap().len(), 3, "offset");
    assert!(store.delete(id).unwrap());
    assert!(!store.delete(id).unwrap(), "deleted once");
    assert_eq!(store.count(None).unwrap(), 3);
}

fn vectors(store: &dyn MemoryStore) {
    let tea = store
        .add_embedded(
            MemoryKind::Fragment,
            "I drink tea",
            "",
            "ada",
            "toy",
            &[1.0, 0.0, 0.0],
        )
        .unwrap()
        .unwrap();
    store
        .add_embedded(
            MemoryKind::Fragment,
            "It rains",
            "",
            "ada",
            "toy",
            &[0.0, 1.0, 0.0],
        )
        .unwrap();
    assert_eq!(store.vector_dimension("toy").unwrap(), Some(3));
    let refused = store.add_embedded(
        MemoryKind::Fragment,
        "I like jazz",
        "",
        "ada",
        "toy",
        &[1.0; 4],
    );
    assert!(
        matches!(
            &refused,
            Err(StoreError::Dimension {
                expected: 3,
                got: 4,
                ..
            })
        ),
        "{refused:?}"
    );
    assert!(refused.unwrap_err().to_string().contains("dimension 4"));
    assert!(
        store.search("jazz", None, 5).unwrap().is_empty(),
        "nothing of it written"
    );
    let found = store
        .nearest("toy", &[0.9, 0.1, 0.0], None, 5, 0.5)
        .unwrap();
    assert_eq!(found.len(), 1, "the threshold holds: {found:?}");
    assert_eq!(found[0].memory.id, tea);
    assert!(found[0].score > 0.9);
    let both = store
        .nearest("toy", &[0.7, 0.7, 0.0], None, 5, 0.1)
        .unwrap();
    assert_eq!(both.len(), 2);
    assert!(both[0].score >= both[1].score, "best first");
    assert!(
        store
            .nearest("toy", &[1.0, 0.0, 0.0], Some(MemoryKind::Lesson), 5, 0.0)
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .nearest("other", &[1.0, 0.0, 0.0], None, 5, 0.0)
            .unwrap()
            .is_empty()
    );
    assert!(store.delete(tea).unwrap());
    let after = store
        .nearest("toy", &[1.0, 0.0, 0.0], None, 5, -1.0)
        .unwrap();
    assert!(
        after.iter().all(|s| s.memory.id != tea),
        "a deleted memory's vector is gone"
    );
}

fn switches_models(store: &dyn MemoryStore) {
    let missing = store.without_vector("wide", 100).unwrap();
    assert_eq!(missing.len() as u64, store.count(None).unwrap());
    assert!(missing.windows(2).all(|w| w[0].0 < w[1].0), "oldest first");
    for (id, _) in &missing {
        assert!(store.set_vector(*id, "wide", &[0.5; 5]).unwrap());
    }
    assert!(matches!(
        store.set_vector(missing[0].0, "wide", &[0.5; 2]),
        Err(StoreError::Dimension {
            expected: 5,
            got: 2,
            ..
        })
    ));
    assert!(
        !store.set_vector(i64::MAX, "wide", &[0.5; 5]).unwrap(),
        "no such memory"
    );
    assert!(store.without_vector("wide", 100).unwrap().is_empty());
    store.switch_model("wide").unwrap();
    assert_eq!(store.embedding_model().unwrap().as_deref(), Some("wide"));
    assert_eq!(
        store.vector_dimension("toy").unwrap(),
        None,
        "the old model's vectors are gone"
    );
    assert_eq!(store.vector_dimension("wide").unwrap(), Some(5));
    assert_eq!(store.reindex("words").unwrap(), store.count(None).unwrap());
    assert_eq!(store.embedding_model().unwrap().as_deref(), Some("words"));
}

fn concurrent_writers_lose_nothing(store: &Arc<dyn MemoryStore>) {
    let before = store.count(None).unwrap();
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let store = Arc::clone(store);
            std::thread::spawn(move || {
                for i in 0..25 {
                    store
                        .add(
                            MemoryKind::Fragment,
                            &format!("writer {w} note {i}"),
                            "",
                            "w",
                        )
                        .unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    assert_eq!(store.count(None).unwrap(), before + 100);
}

/// Two handles on one memory (two processes): what `second` writes, deletes, re-embeds or
/// switches is seen by the next recall by meaning of `first`, which keeps its vectors cached.
pub fn two_handles(first: &dyn MemoryStore, second: &dyn MemoryStore) {
    let (x, y) = ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0]);
    let recall = |model: &str, query: &[f32]| -> Vec<String> {
        first
            .nearest(model, query, None, 5, 0.9)
            .unwrap()
            .into_iter()
            .map(|s| s.memory.text)
            .collect()
    };
    let fragment = MemoryKind::Fragment;
    let along_x = first
        .add_embedded(fragment, "along x", "", "a", "m", &x)
        .unwrap()
        .unwrap();
    assert_eq!(recall("m", &x), ["along x"]);
    assert!(recall("m", &y).is_empty());
    let along_y = second
        .add_embedded(fragment, "along y", "", "b", "m", &y)
        .unwrap()
        .unwrap();
    assert_eq!(recall("m", &y), ["along y"], "the other's new memory");
    assert!(second.delete(along_x).unwrap());
    assert!(recall("m", &x).is_empty(), "the other's delete");
    assert!(second.set_vector(along_y, "m", &x).unwrap());
    assert_eq!(recall("m", &x), ["along y"], "the other's new vector");
    assert!(recall("m", &y).is_empty(), "the old vector is gone");
    second
        .add_embedded(fragment, "along y, other model", "", "b", "other", &y)
        .unwrap();
    second.switch_model("other").unwrap();
    assert!(recall("m", &x).is_empty(), "the other's switch of model");
    assert_eq!(recall("other", &y), ["along y, other model"]);
}

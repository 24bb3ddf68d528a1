//! Per-key single flight: one async mutex per key, made on first use and dropped with its
//! last user, so the map holds only the keys in use. The provider serialises operations on
//! one uid with it, the image cache one fetch per (entry, key).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, PoisonError};

/// Per-key async locks whose entries go away when unused.
pub(crate) struct KeyedLocks<K>(Mutex<HashMap<K, Arc<tokio::sync::Mutex<()>>>>);

impl<K> Default for KeyedLocks<K> {
    fn default() -> Self {
        Self(Mutex::new(HashMap::new()))
    }
}

/// Holds one key's lock; releasing it removes the key's entry if nobody else waits.
pub(crate) struct KeyedGuard<'a, K: Hash + Eq> {
    locks: &'a KeyedLocks<K>,
    key: K,
    guard: Option<tokio::sync::OwnedMutexGuard<()>>,
}

impl<K: Hash + Eq + Clone> KeyedLocks<K> {
    /// Waits for `key`'s lock (other keys never wait for each other).
    pub(crate) async fn lock(&self, key: K) -> KeyedGuard<'_, K> {
        let m = {
            let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            map.entry(key.clone()).or_default().clone()
        };
        let guard = m.lock_owned().await;
        KeyedGuard {
            locks: self,
            key,
            guard: Some(guard),
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

impl<K: Hash + Eq> Drop for KeyedGuard<'_, K> {
    fn drop(&mut self) {
        drop(self.guard.take());
        let mut map = self.locks.0.lock().unwrap_or_else(PoisonError::into_inner);
        if map
            .get(&self.key)
            .is_some_and(|m| Arc::strong_count(m) == 1)
        {
            map.remove(&self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn one_holder_per_key_and_entries_go_with_their_users() {
        let locks = Arc::new(KeyedLocks::<String>::default());
        let a = locks.lock("a".into()).await;
        // Another key does not wait.
        let b = tokio::time::timeout(Duration::from_secs(1), locks.lock("b".into()))
            .await
            .expect("another key is free");
        // The same key waits until the holder lets go.
        let waiter = tokio::spawn({
            let locks = locks.clone();
            async move {
                let _g = locks.lock("a".into()).await;
            }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiter.is_finished(), "a second holder of key a");
        drop(a);
        waiter.await.unwrap();
        drop(b);
        assert_eq!(locks.len(), 0, "unused keys are dropped");
    }
}

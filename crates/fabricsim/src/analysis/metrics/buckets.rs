//! Flow-size buckets: half-open byte ranges cut at increasing edges, with labels
//! (`<10KB`, `10KB-100KB`, `>=1MB`) and column-name keys (`lt10KB`, `10KB_100KB`,
//! `ge1MB`).

/// Default bucket edges in bytes: 10 KB, 100 KB, 1 MB.
pub const DEFAULT_EDGES: [u64; 3] = [10_000, 100_000, 1_000_000];

/// Name of the bucket that holds every flow.
pub const ALL: &str = "all";

/// Flow-size buckets: `edges.len() + 1` half-open ranges `[edge[i-1], edge[i])`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeBuckets {
    edges: Vec<u64>,
}

impl Default for SizeBuckets {
    fn default() -> Self {
        SizeBuckets {
            edges: DEFAULT_EDGES.to_vec(),
        }
    }
}

/// Decimal size with the largest unit that divides it ("10KB", "1MB", "1500B").
fn fmt_decimal(b: u64) -> String {
    for (unit, div) in [("GB", 1_000_000_000), ("MB", 1_000_000), ("KB", 1_000)] {
        if b >= div && b.is_multiple_of(div) {
            return format!("{}{unit}", b / div);
        }
    }
    format!("{b}B")
}

impl SizeBuckets {
    /// Buckets cut at `edges` (bytes, strictly increasing, all > 0); `None` otherwise.
    pub fn new(edges: Vec<u64>) -> Option<Self> {
        if edges.first() == Some(&0) || edges.windows(2).any(|w| w[0] >= w[1]) {
            return None;
        }
        Some(SizeBuckets { edges })
    }

    /// The edges in bytes.
    pub fn edges(&self) -> &[u64] {
        &self.edges
    }

    /// Number of buckets (edges + 1).
    pub fn len(&self) -> usize {
        self.edges.len() + 1
    }

    /// Always false: there is at least one bucket.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Bucket of a flow of `size` bytes.
    pub fn index(&self, size: u64) -> usize {
        self.edges.partition_point(|&e| e <= size)
    }

    /// Human label: `<10KB`, `10KB-100KB`, `>=1MB` (`all` for a single bucket).
    pub fn label(&self, i: usize) -> String {
        let n = self.edges.len();
        if n == 0 {
            ALL.to_string()
        } else if i == 0 {
            format!("<{}", fmt_decimal(self.edges[0]))
        } else if i >= n {
            format!(">={}", fmt_decimal(self.edges[n - 1]))
        } else {
            format!(
                "{}-{}",
                fmt_decimal(self.edges[i - 1]),
                fmt_decimal(self.edges[i])
            )
        }
    }

    /// Column-name friendly label: `lt10KB`, `10KB_100KB`, `ge1MB`.
    pub fn key(&self, i: usize) -> String {
        self.label(i)
            .replace(">=", "ge")
            .replace('<', "lt")
            .replace('-', "_")
    }

    /// Every label in order.
    pub fn labels(&self) -> Vec<String> {
        (0..self.len()).map(|i| self.label(i)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_edges_and_labels() {
        let b = SizeBuckets::default();
        assert_eq!(b.len(), 4);
        assert_eq!(b.index(0), 0);
        assert_eq!(b.index(9_999), 0);
        assert_eq!(b.index(10_000), 1);
        assert_eq!(b.index(99_999), 1);
        assert_eq!(b.index(100_000), 2);
        assert_eq!(b.index(999_999), 2);
        assert_eq!(b.index(1_000_000), 3);
        assert_eq!(b.index(u64::MAX), 3);
        assert_eq!(b.labels(), ["<10KB", "10KB-100KB", "100KB-1MB", ">=1MB"]);
        assert_eq!(
            (0..4).map(|i| b.key(i)).collect::<Vec<_>>(),
            ["lt10KB", "10KB_100KB", "100KB_1MB", "ge1MB"]
        );
        let c = SizeBuckets::new(vec![1500, 2_000_000]).unwrap();
        assert_eq!(c.labels(), ["<1500B", "1500B-2MB", ">=2MB"]);
        assert!(SizeBuckets::new(vec![10, 10]).is_none());
        assert!(SizeBuckets::new(vec![0, 10]).is_none());
        assert_eq!(SizeBuckets::new(vec![]).unwrap().labels(), ["all"]);
    }
}

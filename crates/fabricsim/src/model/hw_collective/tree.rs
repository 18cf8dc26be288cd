//! The logical tree of a hardware collective (document 003: software defines it in the
//! collective's descriptor): every rank but the root has a parent, requests and partial
//! results go up it, and the root's result comes down.
//!
//! Ranks are positions in the collective's host list. A tree is either regular, of a
//! given fan-in (rank positions counted from the root: the children of position p are
//! positions p*k+1 ..= p*k+k), or given explicitly as each rank's parent.

use crate::base::param::ParamError;

/// A rooted tree over ranks `0..n`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tree {
    /// The root rank.
    pub root: u32,
    /// Each rank's parent (`None` for the root).
    pub parent: Vec<Option<u32>>,
    /// Each rank's children, in rank order (the order of a reduction).
    pub children: Vec<Vec<u32>>,
    /// Each rank's depth (the root's is 0).
    pub depth: Vec<u32>,
}

impl Tree {
    /// The regular tree of fan-in `k` over `n` ranks rooted at `root`; errors name
    /// `fan_in`.
    pub fn regular(n: u32, root: u32, k: u32) -> Result<Tree, ParamError> {
        if k == 0 {
            return Err(ParamError::new(
                "fan_in",
                "must be at least 1 (children per node of the tree)",
            ));
        }
        let rank = |p: u32| (root + p) % n;
        let parent = (0..n)
            .map(|r| {
                let p = (r + n - root) % n;
                (p > 0).then(|| rank((p - 1) / k))
            })
            .collect();
        Ok(Tree::from_parents(root, parent))
    }

    /// The tree given by each rank's parent (`-1`, or the rank itself, for the root);
    /// errors name `parents[i]`: an index out of range, no root or several, or a cycle
    /// (a rank from which the parents never reach the root).
    pub fn explicit(parents: &[i64]) -> Result<Tree, ParamError> {
        let n = parents.len() as i64;
        let mut parent = Vec::with_capacity(parents.len());
        let mut root = None;
        for (i, &p) in parents.iter().enumerate() {
            let field = format!("parents[{i}]");
            if p == -1 || p == i as i64 {
                if let Some(r) = root {
                    return Err(ParamError::new(
                        field,
                        format!("a second root (rank {r} is one): a tree has exactly one (its parent -1)"),
                    ));
                }
                root = Some(i as u32);
                parent.push(None);
            } else if p < 0 || p >= n {
                return Err(ParamError::new(
                    field,
                    format!(
                        "parent {p} is not a rank: ranks are 0..{}, or -1 for the root",
                        n - 1
                    ),
                ));
            } else {
                parent.push(Some(p as u32));
            }
        }
        let Some(root) = root else {
            return Err(ParamError::new(
                "parents",
                "no root: one rank must have parent -1",
            ));
        };
        // Every rank must reach the root: walk up, at most n steps.
        for i in 0..parents.len() {
            let mut r = i as u32;
            let mut steps = 0;
            while let Some(p) = parent[r as usize] {
                r = p;
                steps += 1;
                if steps > parents.len() {
                    return Err(ParamError::new(
                        format!("parents[{i}]"),
                        "not a tree: following the parents from this rank never reaches the root (a cycle)",
                    ));
                }
            }
        }
        Ok(Tree::from_parents(root, parent))
    }

    fn from_parents(root: u32, parent: Vec<Option<u32>>) -> Tree {
        let n = parent.len();
        let mut children = vec![Vec::new(); n];
        for (r, p) in parent.iter().enumerate() {
            if let Some(p) = p {
                children[*p as usize].push(r as u32);
            }
        }
        let mut depth = vec![0u32; n];
        let mut stack = vec![root];
        while let Some(r) = stack.pop() {
            for &c in &children[r as usize] {
                depth[c as usize] = depth[r as usize] + 1;
                stack.push(c);
            }
        }
        Tree {
            root,
            parent,
            children,
            depth,
        }
    }

    /// Ranks.
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    /// Whether the tree has no ranks (never: a collective has two at least).
    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// The longest path from a rank to the root, in edges.
    pub fn height(&self) -> u32 {
        self.depth.iter().copied().max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_tree_has_the_heap_layout_from_its_root() {
        let t = Tree::regular(10, 0, 3).unwrap();
        assert_eq!(t.children[0], vec![1, 2, 3]);
        assert_eq!(t.children[1], vec![4, 5, 6]);
        assert_eq!(t.children[3], Vec::<u32>::new());
        assert_eq!(t.height(), 2);
        // Rooted elsewhere, positions count from the root.
        let t = Tree::regular(5, 3, 2).unwrap();
        assert_eq!(t.parent[3], None);
        assert_eq!(t.children[3], vec![0, 4]);
        assert_eq!(t.children[4], vec![1, 2]);
        // Height: ceil(log_k(n (k - 1) + 1)) - 1.
        for (n, k, h) in [
            (256u32, 16u32, 2u32),
            (273, 16, 2),
            (274, 16, 3),
            (1023, 2, 9),
            (1024, 2, 10),
            (2, 1, 1),
            (7, 1, 6),
        ] {
            assert_eq!(Tree::regular(n, 0, k).unwrap().height(), h, "n {n} k {k}");
        }
        assert_eq!(Tree::regular(4, 0, 0).unwrap_err().field, "fan_in");
    }

    #[test]
    fn an_explicit_tree_is_checked() {
        let t = Tree::explicit(&[-1, 0, 0, 1]).unwrap();
        assert_eq!(t.children[0], vec![1, 2]);
        assert_eq!(t.height(), 2);
        assert_eq!(Tree::explicit(&[1, 1, 0]).unwrap().root, 1);
        let e = Tree::explicit(&[-1, 2, 1]).unwrap_err();
        assert_eq!(e.field, "parents[1]");
        assert!(e.message.contains("cycle"), "{}", e.message);
        assert_eq!(Tree::explicit(&[-1, -1]).unwrap_err().field, "parents[1]");
        assert_eq!(Tree::explicit(&[-1, 5]).unwrap_err().field, "parents[1]");
        assert_eq!(Tree::explicit(&[1, 0]).unwrap_err().field, "parents");
    }
}

//! Reductions the NIC's collective engine computes (document 003: sum, max, min and the
//! bitwise ops over the usual element types), on real values so a run's results can be
//! checked.
//!
//! Values are held as 64-bit patterns (`u64`), one per element, whatever the type: an
//! fp32 is its `f32` bits, an int32 its two's complement in the low 32 bits. Integer
//! sums wrap (as the hardware's adders do); floating-point sums round at every step, so
//! their result depends on the order of the additions: the engine always combines a
//! node's own value with its children's in child order, whatever order they arrived in,
//! so a collective's result is a function of its tree alone ([`tree_fold`] is that
//! order, computed without a network).

use serde::Deserialize;

/// The reduction.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// Sum.
    Sum,
    /// Maximum.
    Max,
    /// Minimum.
    Min,
    /// Bitwise and (integers only).
    And,
    /// Bitwise or (integers only).
    Or,
    /// Bitwise exclusive or (integers only).
    Xor,
}

/// The element type.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum DType {
    /// IEEE 754 binary32.
    Fp32,
    /// IEEE 754 binary64.
    Fp64,
    /// Two's complement 32-bit integer.
    Int32,
    /// Two's complement 64-bit integer.
    Int64,
}

impl Op {
    /// Every op, in declaration order.
    pub const ALL: [Op; 6] = [Op::Sum, Op::Max, Op::Min, Op::And, Op::Or, Op::Xor];

    /// Its name in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            Op::Sum => "sum",
            Op::Max => "max",
            Op::Min => "min",
            Op::And => "and",
            Op::Or => "or",
            Op::Xor => "xor",
        }
    }

    /// Whether the op is defined for `t` (bitwise ops are not defined for floats).
    pub fn defined_for(self, t: DType) -> bool {
        !(t.is_float() && matches!(self, Op::And | Op::Or | Op::Xor))
    }

    /// `a op b` for elements of type `t`.
    #[inline]
    pub fn apply(self, t: DType, a: u64, b: u64) -> u64 {
        match t {
            DType::Fp32 => {
                let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
                let r = match self {
                    Op::Sum => x + y,
                    Op::Max => x.max(y),
                    Op::Min => x.min(y),
                    _ => unreachable!("bitwise ops are refused for floats at build"),
                };
                r.to_bits() as u64
            }
            DType::Fp64 => {
                let (x, y) = (f64::from_bits(a), f64::from_bits(b));
                let r = match self {
                    Op::Sum => x + y,
                    Op::Max => x.max(y),
                    Op::Min => x.min(y),
                    _ => unreachable!("bitwise ops are refused for floats at build"),
                };
                r.to_bits()
            }
            DType::Int32 => {
                let (x, y) = (a as u32 as i32, b as u32 as i32);
                let r = match self {
                    Op::Sum => x.wrapping_add(y),
                    Op::Max => x.max(y),
                    Op::Min => x.min(y),
                    Op::And => x & y,
                    Op::Or => x | y,
                    Op::Xor => x ^ y,
                };
                r as u32 as u64
            }
            DType::Int64 => {
                let (x, y) = (a as i64, b as i64);
                let r = match self {
                    Op::Sum => x.wrapping_add(y),
                    Op::Max => x.max(y),
                    Op::Min => x.min(y),
                    Op::And => x & y,
                    Op::Or => x | y,
                    Op::Xor => x ^ y,
                };
                r as u64
            }
        }
    }

    /// `acc[i] = acc[i] op v[i]` for every element.
    #[inline]
    pub fn combine(self, t: DType, acc: &mut [u64], v: &[u64]) {
        for (a, &b) in acc.iter_mut().zip(v) {
            *a = self.apply(t, *a, b);
        }
    }
}

impl DType {
    /// Every type, in declaration order.
    pub const ALL: [DType; 4] = [DType::Fp32, DType::Fp64, DType::Int32, DType::Int64];

    /// Its name in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            DType::Fp32 => "fp32",
            DType::Fp64 => "fp64",
            DType::Int32 => "int32",
            DType::Int64 => "int64",
        }
    }

    /// Bytes per element.
    pub fn bytes(self) -> u64 {
        match self {
            DType::Fp32 | DType::Int32 => 4,
            DType::Fp64 | DType::Int64 => 8,
        }
    }

    /// Floating point.
    pub fn is_float(self) -> bool {
        matches!(self, DType::Fp32 | DType::Fp64)
    }

    /// The value of element `e` that rank `rank` contributes to iteration `iter` of the
    /// collective with key `key`: a pure function of its arguments (a SplitMix64 hash),
    /// spread so that sums, extremes and bits all change with every input. Floats lie in
    /// [-1000, 1000) with 20 significant bits, so a sum rounds (the order matters) but
    /// stays far from overflow; integers use the whole range (sums wrap).
    pub fn input(self, key: u64, rank: u32, iter: u32, e: u32) -> u64 {
        let h = splitmix(key ^ splitmix(((rank as u64) << 32) | iter as u64) ^ (e as u64) << 1);
        match self {
            DType::Fp32 => (((h >> 44) as f32 - 524_288.0) / 524.288).to_bits() as u64,
            DType::Fp64 => {
                (((h >> 44) as f64 - 524_288.0) / 524.288 + 1e-9 * (h & 0xff) as f64).to_bits()
            }
            DType::Int32 => h as u32 as u64,
            DType::Int64 => h,
        }
    }
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The result the engine computes over a tree, without a network: each node's value is
/// its own input combined with its children's values, children in the order given.
/// `children[r]` lists rank r's children; `input(r)` its contribution.
pub fn tree_fold(
    op: Op,
    t: DType,
    root: u32,
    children: &[Vec<u32>],
    input: &dyn Fn(u32) -> Vec<u64>,
) -> Vec<u64> {
    // Post-order without recursion (trees may be deep: a chain of 1024 ranks).
    let mut order = Vec::with_capacity(children.len());
    let mut stack = vec![root];
    while let Some(r) = stack.pop() {
        order.push(r);
        stack.extend(children[r as usize].iter().copied());
    }
    let mut val: Vec<Option<Vec<u64>>> = vec![None; children.len()];
    for &r in order.iter().rev() {
        let mut acc = input(r);
        for &c in &children[r as usize] {
            let v = val[c as usize]
                .take()
                .expect("a child is folded before its parent");
            op.combine(t, &mut acc, &v);
        }
        val[r as usize] = Some(acc);
    }
    val[root as usize].take().expect("the root is folded")
}

/// The result of folding every rank's input in rank order (the direct computation the
/// tree's result is checked against).
pub fn sequential_fold(op: Op, t: DType, n: u32, input: &dyn Fn(u32) -> Vec<u64>) -> Vec<u64> {
    let mut acc = input(0);
    for r in 1..n {
        op.combine(t, &mut acc, &input(r));
    }
    acc
}

/// Whether a tree's result `got` agrees with the direct computation `want`: exactly for
/// integers and for max and min (order-free), and for floating-point sums within the
/// rounding that a different order of `n` additions may cause (n ulp-sized errors
/// relative to the sum of magnitudes, `mag`).
pub fn agrees(op: Op, t: DType, got: &[u64], want: &[u64], mag: &[f64], n: u32) -> bool {
    if got.len() != want.len() {
        return false;
    }
    if !(t.is_float() && op == Op::Sum) {
        return got == want;
    }
    let eps = match t {
        DType::Fp32 => f32::EPSILON as f64,
        _ => f64::EPSILON,
    };
    got.iter().zip(want).zip(mag).all(|((&g, &w), &m)| {
        let (g, w) = match t {
            DType::Fp32 => (
                f32::from_bits(g as u32) as f64,
                f32::from_bits(w as u32) as f64,
            ),
            _ => (f64::from_bits(g), f64::from_bits(w)),
        };
        (g - w).abs() <= 2.0 * n as f64 * eps * m
    })
}

/// The sum of magnitudes of every rank's element `e` (the scale of a sum's rounding).
pub fn magnitudes(t: DType, n: u32, count: usize, input: &dyn Fn(u32) -> Vec<u64>) -> Vec<f64> {
    let mut m = vec![0.0; count];
    for r in 0..n {
        for (mi, &v) in m.iter_mut().zip(&input(r)) {
            *mi += match t {
                DType::Fp32 => (f32::from_bits(v as u32) as f64).abs(),
                DType::Fp64 => f64::from_bits(v).abs(),
                _ => 0.0,
            };
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn to_f64(t: DType, v: u64) -> f64 {
        match t {
            DType::Fp32 => f32::from_bits(v as u32) as f64,
            DType::Fp64 => f64::from_bits(v),
            DType::Int32 => v as u32 as i32 as f64,
            DType::Int64 => v as i64 as f64,
        }
    }

    #[test]
    fn bitwise_ops_are_refused_for_floats_only() {
        for op in Op::ALL {
            for t in DType::ALL {
                let bitwise = matches!(op, Op::And | Op::Or | Op::Xor);
                assert_eq!(
                    op.defined_for(t),
                    !(bitwise && t.is_float()),
                    "{op:?} {t:?}"
                );
            }
        }
    }

    #[test]
    fn hand_values() {
        let i32v = |x: i32| x as u32 as u64;
        assert_eq!(Op::Sum.apply(DType::Int32, i32v(-3), i32v(5)), i32v(2));
        assert_eq!(
            Op::Sum.apply(DType::Int32, i32v(i32::MAX), i32v(1)),
            i32v(i32::MIN)
        );
        assert_eq!(Op::Max.apply(DType::Int32, i32v(-3), i32v(-5)), i32v(-3));
        assert_eq!(
            Op::Min.apply(DType::Int64, (-3i64) as u64, 2),
            (-3i64) as u64
        );
        assert_eq!(Op::Xor.apply(DType::Int64, 0b1100, 0b1010), 0b0110);
        assert_eq!(Op::And.apply(DType::Int32, 0b1100, 0b1010), 0b1000);
        assert_eq!(Op::Or.apply(DType::Int32, 0b1100, 0b1010), 0b1110);
        let f = |x: f32| x.to_bits() as u64;
        assert_eq!(Op::Sum.apply(DType::Fp32, f(1.5), f(2.25)), f(3.75));
        assert_eq!(
            Op::Max.apply(DType::Fp64, 1.5f64.to_bits(), (-2.0f64).to_bits()),
            1.5f64.to_bits()
        );
    }

    #[test]
    fn the_fixed_order_matters_for_float_sums() {
        // Rounding: (1e8 + 1) + -1e8 != 1e8 + (1 + -1e8) in fp32, so a result that did
        // not follow the fixed order would show.
        let v = [1e8f32, 1.0, -1e8];
        let ch = vec![vec![1, 2], vec![], vec![]];
        let input = |r: u32| vec![v[r as usize].to_bits() as u64];
        let tree = tree_fold(Op::Sum, DType::Fp32, 0, &ch, &input);
        assert_eq!(f32::from_bits(tree[0] as u32), 0.0);
        let chain = vec![vec![2], vec![], vec![1]];
        let other = tree_fold(Op::Sum, DType::Fp32, 0, &chain, &input);
        assert_eq!(f32::from_bits(other[0] as u32), 1e8 + (-1e8 + 1.0));
    }

    /// A random tree over n ranks: rank r > 0 hangs under a random earlier rank.
    fn tree(parents: &[u32]) -> Vec<Vec<u32>> {
        let mut ch = vec![Vec::new(); parents.len() + 1];
        for (i, &p) in parents.iter().enumerate() {
            ch[(p as usize) % (i + 1)].push(i as u32 + 1);
        }
        ch
    }

    proptest! {
        /// Over any tree, every op and type: the tree's result equals the direct
        /// computation (exactly, but for float sums within their rounding), and each
        /// element agrees with a computation in wide arithmetic.
        #[test]
        fn tree_results_equal_the_direct_computation(
            parents in prop::collection::vec(0u32..64, 0..40),
            key in any::<u64>(),
            iter in 0u32..4,
            count in 1usize..5,
        ) {
            let ch = tree(&parents);
            let n = ch.len() as u32;
            for t in DType::ALL {
                let input = |r: u32| (0..count as u32).map(|e| t.input(key, r, iter, e)).collect::<Vec<u64>>();
                for op in Op::ALL.into_iter().filter(|op| op.defined_for(t)) {
                    let got = tree_fold(op, t, 0, &ch, &input);
                    let want = sequential_fold(op, t, n, &input);
                    let mag = magnitudes(t, n, count, &input);
                    prop_assert!(agrees(op, t, &got, &want, &mag, n), "{op:?} {t:?}");
                    for e in 0..count {
                        let xs: Vec<u64> = (0..n).map(|r| input(r)[e]).collect();
                        match (op, t) {
                            (Op::Sum, DType::Int32) => {
                                let s: i64 = xs.iter().map(|&x| x as u32 as i32 as i64).sum();
                                prop_assert_eq!(got[e], s as i32 as u32 as u64);
                            }
                            (Op::Sum, DType::Int64) => {
                                let s: i128 = xs.iter().map(|&x| x as i64 as i128).sum();
                                prop_assert_eq!(got[e], s as i64 as u64);
                            }
                            (Op::Sum, _) => {
                                let s: f64 = xs.iter().map(|&x| to_f64(t, x)).sum();
                                prop_assert!((to_f64(t, got[e]) - s).abs() <= 2.0 * n as f64 * f32::EPSILON as f64 * mag[e] + 1e-12);
                            }
                            (Op::Max, _) => {
                                let m = xs.iter().map(|&x| to_f64(t, x)).fold(f64::MIN, f64::max);
                                prop_assert_eq!(to_f64(t, got[e]), m);
                            }
                            (Op::Min, _) => {
                                let m = xs.iter().map(|&x| to_f64(t, x)).fold(f64::MAX, f64::min);
                                prop_assert_eq!(to_f64(t, got[e]), m);
                            }
                            (Op::And, _) => prop_assert_eq!(got[e], xs.iter().fold(u64::MAX, |a, &x| a & x) & mask(t)),
                            (Op::Or, _) => prop_assert_eq!(got[e], xs.iter().fold(0, |a, &x| a | x)),
                            (Op::Xor, _) => prop_assert_eq!(got[e], xs.iter().fold(0, |a, &x| a ^ x)),
                        }
                    }
                }
            }
        }
    }

    fn mask(t: DType) -> u64 {
        if t.bytes() == 4 {
            u32::MAX as u64
        } else {
            u64::MAX
        }
    }
}

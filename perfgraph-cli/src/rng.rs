//! A small seeded pseudo-random generator, shared by what must print the same from the same input: the
//! gate's bootstrap and rank tests, `perfgraph record`'s run order, `perfgraph causal`'s intervals.

/// A small seeded pseudo-random generator (xoshiro256**, its state seeded by splitmix64), so that every
/// output drawn from it is reproducible.
#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
    /// The second of the last pair of normal deviates, not handed out yet.
    spare: Option<f64>,
}

impl Rng {
    /// A generator whose output depends only on `seed`.
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        // Four successive outputs of splitmix64 are distinct, so the state is never all zero.
        Rng {
            s: [next(), next(), next(), next()],
            spare: None,
        }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let out = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        out
    }

    /// A uniform deviate in [0, 1), on a grid of 2^-53.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform integer in [0, n), without bias (Lemire's multiply and reject).
    ///
    /// # Panics
    ///
    /// When `n` is 0.
    pub fn below(&mut self, n: usize) -> usize {
        assert!(n > 0, "Rng::below(0)");
        let n = n as u64;
        let mut m = u128::from(self.next_u64()) * u128::from(n);
        if (m as u64) < n {
            let reject = n.wrapping_neg() % n;
            while (m as u64) < reject {
                m = u128::from(self.next_u64()) * u128::from(n);
            }
        }
        (m >> 64) as usize
    }

    /// A standard normal deviate (Marsaglia's polar method; each pair's second deviate is kept for the
    /// next call).
    pub fn normal(&mut self) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        loop {
            let u = 2.0 * self.uniform() - 1.0;
            let v = 2.0 * self.uniform() - 1.0;
            let s = u * u + v * v;
            if s > 0.0 && s < 1.0 {
                let f = (-2.0 * s.ln() / s).sqrt();
                self.spare = Some(v * f);
                return u * f;
            }
        }
    }
}

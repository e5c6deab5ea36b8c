//! A small neural network trained by back-propagation: 35 inputs (a 5×7
//! pixel glyph), 8 hidden and 8 output sigmoid units, learning to map the 16
//! hexadecimal digit glyphs to the bits of their ASCII codes.
//!
//! One iteration restarts from the same pseudo-random weights and trains for
//! a fixed number of epochs (online updates with momentum, patterns in a
//! fixed order). A fixed epoch count, rather than "until the error is small",
//! keeps the work identical on every machine even if a maths library's `exp`
//! differs in the last bit. The work is double-precision multiply-adds and
//! `exp`: floating-point index. Verification: after training every glyph is
//! recognised (each output on the right side of 0.5) and the mean squared
//! error is below a tolerance.

use std::hint::black_box;
use sysgauge_stats::SplitMix64;

pub const SUMMARY: &str =
    "back-propagation training of a 35-8-8 sigmoid network on 16 glyphs, fixed epoch count";

pub const INPUTS: usize = 35;
pub const HIDDEN: usize = 8;
pub const OUTPUTS: usize = 8;
/// Training epochs per iteration (each epoch presents all 16 glyphs once).
pub const EPOCHS: usize = 200;
const LEARNING_RATE: f64 = 0.3;
const MOMENTUM: f64 = 0.5;
/// Mean squared error (per output) the trained network must be below.
const MAX_MSE: f64 = 0.004;
const SEED: u64 = 0x6e65_7572_616c_6e74;

/// The glyphs, 7 rows of 5 pixels each, for 0–9 and A–F.
const GLYPHS: [(u8, [&str; 7]); 16] = [
    (
        b'0',
        [
            ".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###.",
        ],
    ),
    (
        b'1',
        [
            "..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###.",
        ],
    ),
    (
        b'2',
        [
            ".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####",
        ],
    ),
    (
        b'3',
        [
            "####.", "....#", "....#", ".###.", "....#", "....#", "####.",
        ],
    ),
    (
        b'4',
        [
            "...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#.",
        ],
    ),
    (
        b'5',
        [
            "#####", "#....", "####.", "....#", "....#", "#...#", ".###.",
        ],
    ),
    (
        b'6',
        [
            "..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###.",
        ],
    ),
    (
        b'7',
        [
            "#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#...",
        ],
    ),
    (
        b'8',
        [
            ".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###.",
        ],
    ),
    (
        b'9',
        [
            ".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##..",
        ],
    ),
    (
        b'A',
        [
            "..#..", ".#.#.", "#...#", "#...#", "#####", "#...#", "#...#",
        ],
    ),
    (
        b'B',
        [
            "####.", "#...#", "#...#", "####.", "#...#", "#...#", "####.",
        ],
    ),
    (
        b'C',
        [
            ".###.", "#...#", "#....", "#....", "#....", "#...#", ".###.",
        ],
    ),
    (
        b'D',
        [
            "###..", "#..#.", "#...#", "#...#", "#...#", "#..#.", "###..",
        ],
    ),
    (
        b'E',
        [
            "#####", "#....", "#....", "####.", "#....", "#....", "#####",
        ],
    ),
    (
        b'F',
        [
            "#####", "#....", "#....", "####.", "#....", "#....", "#....",
        ],
    ),
];

/// Weights of one layer: `outputs` rows of `inputs + 1` (the last is the bias).
#[derive(Clone)]
struct Layer {
    inputs: usize,
    w: Vec<f64>,
    /// Previous weight change, for momentum.
    dw: Vec<f64>,
}

impl Layer {
    fn new(inputs: usize, outputs: usize, rng: &mut SplitMix64) -> Layer {
        Layer {
            inputs,
            w: (0..outputs * (inputs + 1))
                .map(|_| rng.next_f64() - 0.5)
                .collect(),
            dw: vec![0.0; outputs * (inputs + 1)],
        }
    }

    fn forward(&self, x: &[f64], out: &mut [f64]) {
        for (o, row) in out.iter_mut().zip(self.w.chunks_exact(self.inputs + 1)) {
            let mut s = row[self.inputs];
            for (wi, xi) in row.iter().zip(x) {
                s += wi * xi;
            }
            *o = sigmoid(s);
        }
    }

    fn update(&mut self, x: &[f64], delta: &[f64]) {
        let n = self.inputs + 1;
        for ((row, drow), d) in self
            .w
            .chunks_exact_mut(n)
            .zip(self.dw.chunks_exact_mut(n))
            .zip(delta)
        {
            for i in 0..n {
                let xi = if i < self.inputs { x[i] } else { 1.0 };
                let change = LEARNING_RATE * d * xi + MOMENTUM * drow[i];
                row[i] += change;
                drow[i] = change;
            }
        }
    }
}

fn sigmoid(s: f64) -> f64 {
    1.0 / (1.0 + (-s).exp())
}

pub struct NeuralNet {
    patterns: Vec<([f64; INPUTS], [f64; OUTPUTS])>,
    initial: (Layer, Layer),
    hidden: Layer,
    output: Layer,
    h: [f64; HIDDEN],
    o: [f64; OUTPUTS],
    epochs: usize,
    iterations: u64,
}

impl NeuralNet {
    pub fn new() -> Self {
        Self::with_epochs(EPOCHS)
    }

    pub fn with_epochs(epochs: usize) -> Self {
        let patterns = GLYPHS
            .iter()
            .map(|(code, rows)| {
                let mut x = [0.0; INPUTS];
                for (r, row) in rows.iter().enumerate() {
                    for (c, px) in row.bytes().enumerate() {
                        x[r * 5 + c] = if px == b'#' { 1.0 } else { 0.0 };
                    }
                }
                let t = std::array::from_fn(|bit| if code >> bit & 1 == 1 { 0.9 } else { 0.1 });
                (x, t)
            })
            .collect();
        let mut rng = SplitMix64::new(SEED);
        let hidden = Layer::new(INPUTS, HIDDEN, &mut rng);
        let output = Layer::new(HIDDEN, OUTPUTS, &mut rng);
        NeuralNet {
            patterns,
            initial: (hidden.clone(), output.clone()),
            hidden,
            output,
            h: [0.0; HIDDEN],
            o: [0.0; OUTPUTS],
            epochs,
            iterations: 0,
        }
    }

    fn train_pattern(&mut self, p: usize) {
        let (x, t) = &self.patterns[p];
        self.hidden.forward(x, &mut self.h);
        self.output.forward(&self.h, &mut self.o);
        let mut d_out = [0.0; OUTPUTS];
        for k in 0..OUTPUTS {
            d_out[k] = (t[k] - self.o[k]) * self.o[k] * (1.0 - self.o[k]);
        }
        let mut d_hid = [0.0; HIDDEN];
        for (j, d) in d_hid.iter_mut().enumerate() {
            let back: f64 = (0..OUTPUTS)
                .map(|k| self.output.w[k * (HIDDEN + 1) + j] * d_out[k])
                .sum();
            *d = back * self.h[j] * (1.0 - self.h[j]);
        }
        self.output.update(&self.h, &d_out);
        let x = self.patterns[p].0;
        self.hidden.update(&x, &d_hid);
    }

    fn train(&mut self) {
        self.hidden.w.copy_from_slice(&self.initial.0.w);
        self.hidden.dw.fill(0.0);
        self.output.w.copy_from_slice(&self.initial.1.w);
        self.output.dw.fill(0.0);
        for _ in 0..black_box(self.epochs) {
            for p in 0..self.patterns.len() {
                self.train_pattern(p);
            }
        }
    }

    /// Mean squared error per output, and how many glyphs are recognised.
    pub fn evaluate(&self) -> (f64, usize) {
        let (mut h, mut o) = ([0.0; HIDDEN], [0.0; OUTPUTS]);
        let (mut sq, mut right) = (0.0, 0);
        for (x, t) in &self.patterns {
            self.hidden.forward(x, &mut h);
            self.output.forward(&h, &mut o);
            sq += o.iter().zip(t).map(|(a, b)| (a - b) * (a - b)).sum::<f64>();
            if o.iter().zip(t).all(|(a, b)| (*a > 0.5) == (*b > 0.5)) {
                right += 1;
            }
        }
        (sq / (self.patterns.len() * OUTPUTS) as f64, right)
    }
}

impl super::Kernel for NeuralNet {
    fn run(&mut self, iterations: u64) {
        for _ in 0..iterations {
            self.train();
            black_box((&self.hidden.w, &self.output.w));
        }
        self.iterations += iterations;
    }

    fn verify(&self) -> Result<(), String> {
        if self.iterations == 0 {
            return Err("neural net has not run".into());
        }
        let (mse, right) = self.evaluate();
        if right != self.patterns.len() || mse.is_nan() || mse >= MAX_MSE {
            return Err(format!(
                "neural net: after training {right} of {} glyphs recognised, mean squared error {mse:.5} (must be below {MAX_MSE})",
                self.patterns.len()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::Kernel;
    use super::*;

    #[test]
    fn glyphs_are_distinct_and_well_formed() {
        let n = NeuralNet::new();
        for (i, (x, _)) in n.patterns.iter().enumerate() {
            for (y, _) in &n.patterns[i + 1..] {
                assert_ne!(x, y);
            }
        }
        for (_, rows) in GLYPHS {
            assert!(rows
                .iter()
                .all(|r| r.len() == 5 && r.bytes().all(|b| b == b'#' || b == b'.')));
        }
    }

    #[test]
    fn untrained_fails_trained_passes() {
        let mut n = NeuralNet::with_epochs(1);
        n.run(1);
        assert!(n.verify().is_err(), "one epoch must not be enough");
        let mut n = NeuralNet::new();
        n.run(1);
        n.verify().unwrap();
        let first = n.evaluate();
        n.run(1);
        assert_eq!(first, n.evaluate(), "iterations must repeat exactly");
    }

    #[test]
    fn training_reduces_error() {
        let mut errors = Vec::new();
        for epochs in [1, EPOCHS / 4, EPOCHS] {
            let mut n = NeuralNet::with_epochs(epochs);
            n.run(1);
            errors.push(n.evaluate().0);
        }
        assert!(errors[0] > errors[1] && errors[1] > errors[2], "{errors:?}");
    }
}

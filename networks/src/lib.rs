//! Neural-network members for metagame: the multilayer perceptron that PyTorch saves as
//! `nn.Sequential(Linear, ReLU, …, Linear)`, read from and written to its safetensors
//! layout, answering batches of decision points with float32 SIMD inference.
//!
//! # Overview
//!
//! - [`Mlp`]: the network, built from [`Linear`] layers ([`Mlp::new`]), drawn at random
//!   with PyTorch's default initialisation from a seed ([`Mlp::random`]), read
//!   ([`Mlp::read`], [`Mlp::from_bytes`]) and written ([`Mlp::write`], [`Mlp::to_bytes`]) as
//!   the safetensors file that `safetensors.torch.save_file(model.state_dict(), path)`
//!   writes (keys `0.weight` `[out × in]`, `0.bias`, `2.weight`, …), every malformed file a
//!   typed [`Error`] naming the tensor at fault.
//! - [`Mlp::logits`]: a batch `[B × d]` in, logits `[B × A]` out, each layer one pass of
//!   the crate's float32 GEMM kernel (weights packed once, `pulp`'s run-time SIMD dispatch,
//!   bias and ReLU fused); a row's logits are bit-identical whatever batch it is in and
//!   wherever in it, since every output is one fixed sequence of fused multiply-adds.
//! - [`Policy`](metagame_games::Policy) for [`Mlp`]: the logits masked to the legal actions
//!   and soft-maxed, so a network plays wherever a table does.
//! - [`Mlp::check_fits`] / [`Mlp::check_fits_game`]: the network's input and output
//!   against a game's tensor size and distinct actions.
//!
//! # Examples
//!
//! ```
//! use metagame_games::{Decisions, PlayerId, Policy, check_probabilities};
//! use metagame_networks::Mlp;
//! use ndarray::{Array2, array};
//!
//! // Leduc's shapes: a 30-value information-state tensor, 3 actions.
//! let mlp = Mlp::random(&[30, 128, 128, 3], 42)?;
//! mlp.check_fits(30, 3)?;
//!
//! // Two decision points: all three actions legal, then only call and raise.
//! let tensors = Array2::<f32>::zeros((2, 30));
//! let legal = array![[true, true, true], [false, true, true]];
//! let batch = Decisions { player: PlayerId(0), tensors: tensors.view(), legal: legal.view(), infosets: None };
//! let mut probs = Array2::<f32>::zeros((2, 3));
//! mlp.probabilities(&batch, probs.view_mut())?;
//! check_probabilities(legal.view(), probs.view())?;
//! assert_eq!(probs[[1, 0]], 0.0);
//!
//! // PyTorch's layout, both ways.
//! assert_eq!(Mlp::from_bytes(&mlp.to_bytes()?)?, mlp);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Features
//!
//! None: the crate is plain safe Rust (`safetensors`, `half` for F16/BF16 files, and its
//! own GEMM kernel on `pulp`'s run-time SIMD dispatch).

#![deny(missing_docs)]

mod error;
mod forward;
mod init;
mod kernel;
mod linear;
mod mlp;
mod policy;
mod state_dict;

pub use error::{Error, GapStart, Result};
pub use init::MAX_PARAMETERS;
pub use linear::Linear;
pub use mlp::{Mlp, Output};
pub use state_dict::MAX_FILE_BYTES;

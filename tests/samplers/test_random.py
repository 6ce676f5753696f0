"""The kernels' randomness (skgibbs._random): Bernoulli batches from the chains' own generators."""

import numpy as np
import torch

from skgibbs.samplers import draw_batch


def _gens(*seeds):
    return [torch.Generator().manual_seed(s) for s in seeds]


def test_full_data_batch_at_rho_one():
    batch = draw_batch(_gens(0, 1), n=17, rho=1.0)
    assert batch.idx is None and batch.mask is None
    assert batch.size.tolist() == [17, 17]


def test_single_chain_batch_is_sorted_subset_without_padding():
    batch = draw_batch(_gens(0), n=200, rho=0.3)
    idx = batch.idx[0]
    assert batch.mask is None and batch.idx.shape == (1, int(batch.size[0]))
    assert torch.all(idx[1:] > idx[:-1]) and idx.min() >= 0 and idx.max() < 200


def test_multi_chain_batch_padding_and_sizes():
    batch = draw_batch(_gens(0, 1, 2), n=50, rho=0.2)
    assert batch.idx.shape[0] == 3 and batch.mask.shape == batch.idx.shape
    torch.testing.assert_close(batch.mask.sum(1).long(), batch.size)
    for k in range(3):
        real = batch.idx[k, batch.mask[k] > 0]
        assert len(torch.unique(real)) == len(real) == int(batch.size[k])


def test_batches_depend_only_on_own_generator():
    alone = draw_batch(_gens(7), n=100, rho=0.3)
    together = draw_batch(_gens(3, 7), n=100, rho=0.3)
    k = int(together.size[1])
    assert torch.equal(alone.idx[0], together.idx[1, :k])


def test_batch_size_is_binomial():
    # |Z|_1 ~ Bin(n, rho): mean n rho, sd sqrt(n rho (1 - rho)); 400 batches
    n, rho = 500, 0.1
    gens = _gens(0)
    sizes = np.array([int(draw_batch(gens, n, rho).size[0]) for _ in range(400)])
    sd = np.sqrt(n * rho * (1 - rho))
    assert abs(sizes.mean() - n * rho) < 4 * sd / np.sqrt(len(sizes))
    assert abs(sizes.std() / sd - 1) < 0.2



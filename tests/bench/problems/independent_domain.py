"""The independent computations of the domain problems, each its application's maths over the whole
input: PhysicsNeMo's distributed real FFT and its inverse (59, 60), gsplat's Gaussian projection (61),
torch-harmonics' spherical convolution (62), GNN neighbour sampling and negative-scoring ranks (64, 69),
Open-Sora's 3-D convolution (76), MAGI-1's tiled video decode (78), DINOv2's k-nearest neighbours and
Sinkhorn-Knopp (79, 80), SAM 3's IoU suppression (81), sample sort (85) and the 2-D convolution with halo
exchange (87). Where ties make several answers right (69, 79), the expected value is the set of right
answers (Ties, Neighbours), which the test checks by its rule.
"""

import torch

from float64 import f64


def distributed_rfft(args, W):
    """59: the whole field from every rank's columns, its 2-D real FFT (orthonormal), each rank's band of rows."""
    field = torch.cat([f64(a[0]) for a in args], dim=2)
    spectrum = torch.fft.rfft2(field, dim=(1, 2), norm="ortho")
    return list(spectrum.chunk(W, dim=1))


def distributed_irfft(args, W):
    """60: the whole half spectrum from every rank's rows, its 2-D inverse real FFT (orthonormal), each rank's
    block of columns."""
    spectrum = torch.cat([f64(a[0]) for a in args], dim=-2)
    H, X = args[0][1]
    field = torch.fft.irfft2(spectrum, s=(H, X), dim=(-2, -1), norm="ortho")
    return list(field.chunk(W, dim=-1))


def gaussian_splatting(args, W):
    """61: every (camera, Gaussian) pair projected in float64 (covariance R S^2 R^T from the unit quaternion, camera
    frame, perspective Jacobian with the frustum clamp, eps2d on the diagonal); pairs whose depth is in range and
    whose radius box meets the image are kept. Rank r gets, sender by sender, the pairs of its camera; Gaussian
    ids shifted by the Gaussians of ranks before r (PKB's offsets)."""
    IW, IH, eps2d, near, far = args[0][7:12]
    counts = [a[0].shape[0] for a in args]
    outs = []
    for r in range(W):
        view, K = f64(args[r][5][0]), f64(args[r][6][0])
        fx, fy, cx, cy = K[0, 0], K[1, 1], K[0, 2], K[1, 2]
        pieces = [[] for _ in range(8)]
        for s in range(W):
            mu, q, sc = f64(args[s][0]), f64(args[s][1]), f64(args[s][2])
            w, x, y, z = (q / q.norm(dim=1, keepdim=True)).unbind(1)
            R = torch.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                             2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                             2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], dim=1).view(-1, 3, 3)
            cov = R @ torch.diag_embed(sc * sc) @ R.transpose(1, 2)
            pc = mu @ view[:3, :3].T + view[:3, 3]
            covc = view[:3, :3] @ cov @ view[:3, :3].T
            tz = pc[:, 2]
            tx = tz * (pc[:, 0] / tz).clamp(-(cx / fx + 0.15 * IW / fx), (IW - cx) / fx + 0.15 * IW / fx)
            ty = tz * (pc[:, 1] / tz).clamp(-(cy / fy + 0.15 * IH / fy), (IH - cy) / fy + 0.15 * IH / fy)
            J = torch.zeros(len(tz), 2, 3, dtype=torch.float64)
            J[:, 0, 0], J[:, 0, 2] = fx / tz, -fx * tx / tz ** 2
            J[:, 1, 1], J[:, 1, 2] = fy / tz, -fy * ty / tz ** 2
            c2 = J @ covc @ J.transpose(1, 2) + eps2d * torch.eye(2, dtype=torch.float64)
            det = (c2[:, 0, 0] * c2[:, 1, 1] - c2[:, 0, 1] * c2[:, 1, 0]).clamp(min=1e-10)
            conic = torch.stack([c2[:, 1, 1] / det, -(c2[:, 0, 1] + c2[:, 1, 0]) / 2 / det, c2[:, 0, 0] / det], dim=1)
            m2 = torch.stack([fx * pc[:, 0] / tz + cx, fy * pc[:, 1] / tz + cy], dim=1)
            radius = torch.ceil(3.33 * torch.stack([c2[:, 0, 0], c2[:, 1, 1]], dim=1).sqrt())
            keep = (tz > near) & (tz < far) & (m2[:, 0] + radius[:, 0] > 0) & (m2[:, 0] - radius[:, 0] < IW) \
                & (m2[:, 1] + radius[:, 1] > 0) & (m2[:, 1] - radius[:, 1] < IH)
            ids = torch.nonzero(keep).reshape(-1)
            for i, v in enumerate([torch.zeros(len(ids), dtype=torch.float64), f64(ids + sum(counts[:r])),
                                   radius[ids], m2[ids], tz[ids], conic[ids], f64(args[s][3])[ids],
                                   f64(args[s][4])[ids]]):
                pieces[i].append(v)
        outs.append(tuple(torch.cat(p) for p in pieces))
    return outs


def spherical_conv(args, W, mesh):
    polar, azimuth = mesh["polar"], mesh["azimuth"]
    rank_of = lambda p, a: p * azimuth + a  # noqa: E731 - row-major over (polar, azimuth)
    # The whole sphere: x of rank (p, a) is latitude band p, longitude range a.
    x = torch.cat([torch.cat([f64(args[rank_of(p, a)][0]) for a in range(azimuth)], dim=3) for p in range(polar)],
                  dim=2)
    B, C, nlat, nlon = x.shape
    lat_band, lon_share, chan_share = nlat // polar, nlon // azimuth, C // azimuth
    K, nlat_out = args[0][3][0], args[0][3][1]
    nlon_out = args[0][6]
    step = nlon // nlon_out
    # After the first transpose, channel share a of latitude band p is contracted with rank (p, a)'s filter,
    # and the polar sum adds the bands.
    y = torch.zeros(B, C, K, nlat_out, nlon_out, dtype=torch.float64)
    for p in range(polar):
        for a in range(azimuth):
            _, idx, val, size = args[rank_of(p, a)][:4]
            psi = torch.sparse_coo_tensor(idx, f64(val), size=tuple(size)).to_dense()  # (K, nlat_out, band*nlon)
            channels = slice(a * chan_share, (a + 1) * chan_share)
            band = x[:, channels, p * lat_band:(p + 1) * lat_band]  # (B, c, band, nlon)
            for q in range(nlon_out):
                rolled = torch.roll(band, -q * step, dims=3).reshape(B, chan_share, -1)
                y[:, channels, :, :, q] += torch.einsum("kls,bcs->bckl", psi, rolled)
    outs = []
    for r in range(W):
        p, a = divmod(r, azimuth)
        weight, bias = f64(args[r][4]), f64(args[r][10])
        mine = y[:, :, :, p * lat_band:(p + 1) * lat_band, a * lon_share:(a + 1) * lon_share]
        outs.append(torch.einsum("bckxy,ock->boxy", mine, weight) + bias.view(1, -1, 1, 1))
    return outs


def neighbor_sampling(args, W):
    """64: per rank, hop by hop, each frontier node's first min(k, degree) neighbours as its owner stores them;
    nodes kept in order of first appearance; edges relabelled to positions in that order."""
    def neighbours(v):
        ptr, col = args[int(args[0][4][v])][2], args[int(args[0][4][v])][3]
        return list(range(int(ptr[v]), int(ptr[v + 1]))), col
    outs = []
    for r in range(W):
        seeds, fanouts = args[r][0].tolist(), args[r][1]
        nodes, frontier, rows, cols, edges = list(seeds), list(seeds), [], [], []
        for k in fanouts:
            found = []
            for v in frontier:
                ids, col = neighbours(v)
                for e in ids[:k]:
                    found.append((int(col[e]), v, e))
            if not found:
                break
            seen, frontier = set(nodes), []
            for u, _, _ in found:
                if u not in seen:
                    seen.add(u)
                    frontier.append(u)
            nodes += frontier
            rows += [u for u, _, _ in found]
            cols += [v for _, v, _ in found]
            edges += [e for _, _, e in found]
        where = {v: i for i, v in enumerate(nodes)}
        as_tensor = lambda xs: torch.tensor(xs, dtype=torch.int64)  # noqa: E731
        outs.append((as_tensor(nodes), as_tensor([where[u] for u in rows]), as_tensor([where[v] for v in cols]),
                     as_tensor(edges)))
    return outs


class Ties:
    """The ranks each element may take: lo <= rank <= hi (tensors of the output's shape)."""

    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi


def tie_intervals(args, W):
    """For every positive of every rank (in rank order): the 1-based ranks it may take among its candidates
    sorted by bf16 sigmoid from the largest, ties in either order."""
    keys = torch.cat([torch.sigmoid(torch.cat([a[0].view(-1, 1), a[1]], dim=1)) for a in args]).to(torch.float64)
    item = keys[:, :1]
    before = (keys > item).sum(dim=1)
    tied = (keys == item).sum(dim=1)
    return Ties(before + 1, before + tied)


def conv3d_allreduce(args, W):
    """76: the convolution over all ranks' input channels at once (the weight slices side by side), plus bias."""
    x = torch.cat([f64(a[0]) for a in args], dim=1)
    weight = torch.cat([f64(a[1]) for a in args], dim=1)
    _, _, bias, stride, padding, dilation, groups, _ = args[0]
    out = torch.nn.functional.conv3d(x, weight, f64(bias), stride, padding, dilation, groups)
    return [out] * W


def tiled_decode(args, W):
    """78: the tile grid over the latent's (t, h, w); tile k (row-major) is cut from the latent of the rank that
    the deal (sizes descending, round-robin) gives it, upsampled trilinearly, ramped into its unramped
    predecessor along t, h, w in turn, cropped to the stride and stitched."""
    z, TL, TH, TW, s_overlap, t_overlap, up, tup = args[0][:8]
    size, overlap, scale = (TL, TH, TW), (t_overlap, s_overlap, s_overlap), (tup, up, up)
    stride = [int(n * (1 - f)) for n, f in zip(size, overlap)]
    ramp = [int(n * k * f) for n, k, f in zip(size, scale, overlap)]
    counts = [-(-z.shape[2 + d] // stride[d]) for d in range(3)]
    grid = [(t, h, w) for t in range(counts[0]) for h in range(counts[1]) for w in range(counts[2])]
    cut = lambda zz, at: zz[:, :, at[0] * stride[0]:at[0] * stride[0] + TL, at[1] * stride[1]:at[1] * stride[1] + TH,
                             at[2] * stride[2]:at[2] * stride[2] + TW]  # noqa: E731
    by_size = sorted(range(len(grid)), key=lambda k: -cut(z, grid[k]).numel())
    owner = {k: pos % W for pos, k in enumerate(by_size)}
    decoded = {at: torch.nn.functional.interpolate(f64(cut(args[owner[k]][0], at)), scale_factor=scale,
                                                   mode="trilinear", align_corners=False)[:, :3]
               for k, at in enumerate(grid)}
    cropped = {}
    for at in grid:
        tile = decoded[at].clone()
        for d in range(3):
            if at[d] == 0:
                continue
            before = decoded[tuple(c - (i == d) for i, c in enumerate(at))]
            n = min(before.shape[2 + d], tile.shape[2 + d], ramp[d])
            w = (torch.arange(n, dtype=torch.float64) / n).view([-1] + [1] * (2 - d)) if n else None
            if n:
                head = tile.narrow(2 + d, 0, n)
                head.copy_(before.narrow(2 + d, before.shape[2 + d] - n, n) * (1 - w) + head * w)
        keep = [n * k - r for n, k, r in zip(size, scale, ramp)]
        cropped[at] = tile[:, :, :keep[0], :keep[1], :keep[2]]
    video = torch.cat([torch.cat([torch.cat([cropped[(t, h, w)] for w in range(counts[2])], dim=4)
                                  for h in range(counts[1])], dim=3) for t in range(counts[0])], dim=2)
    return [video] * W


class Neighbours:
    """79's labels: for each query (row) the similarity every label stands for, and the similarities the k
    selected labels must have, position by position."""

    def __init__(self, keys, want):
        self.keys, self.want = keys, want


def knn(args, W):
    """Every query against the whole training set; the k largest similarities from the largest. Labels are
    judged by the similarity they stand for (ties may come in any order)."""
    train = torch.cat([f64(a[1]) for a in args], dim=1)
    labels = torch.cat([a[2] for a in args], dim=1).view(-1)
    outs = []
    for a in args:
        similarity = f64(a[0]) @ train
        keys = torch.empty_like(similarity)
        keys[:, labels] = similarity
        best = similarity.sort(dim=1, descending=True).values[:, :a[3]]
        outs.append((best, Neighbours(keys, best)))
    return outs


def sinkhorn(args, W):
    """80: the balancing on the whole (P, all samples) matrix in float64, each rank's columns back as rows."""
    temp, iterations = args[0][1], args[0][3]
    mass = torch.exp(torch.cat([f64(a[0]) for a in args]) / temp).t()
    samples = float(sum(int(a[2].item()) for a in args))
    mass = mass / mass.sum()
    for _ in range(iterations):
        mass = mass / mass.sum(dim=1, keepdim=True) / mass.shape[0]
        mass = mass / mass.sum(dim=0, keepdim=True) / samples
    mass = mass * samples
    return list(mass.t().split([a[0].shape[0] for a in args]))


def mask_suppression(args, W):
    """81: all masks in rank order; for each pair i < j whose binary masks overlap by IoU >= the threshold, the
    one occluded later (earlier with reverse) is dropped when the other was occluded at all."""
    masks = torch.cat([f64(a[0]) for a in args])
    scores = torch.cat([f64(a[1]) for a in args])
    last, threshold, reverse = args[0][3].tolist(), args[0][4], args[0][5]
    on = [set(torch.nonzero(m.reshape(-1) > 0).reshape(-1).tolist()) for m in masks]
    drop = [False] * len(on)
    for i in range(len(on)):
        for j in range(i + 1, len(on)):
            union = len(on[i] | on[j])
            if len(on[i] & on[j]) / max(union, 1) < threshold:
                continue
            later, earlier = (j, i) if (last[j] > last[i]) != reverse and last[j] != last[i] else (i, j)
            if last[later] != last[earlier] and last[earlier] > -1:
                drop[later] = True
    kept = masks.clone()
    kept[torch.tensor(drop, dtype=torch.bool)] = -10.0
    return [(kept, scores, torch.tensor(drop, dtype=torch.float64))] * W


def sample_sort(args, W):
    """85: all ranks' values sorted; rank r's share starts at r·(T // W) + min(r, T % W)."""
    ordered = torch.cat([f64(a[0]) for a in args]).sort().values
    T = ordered.numel()
    return list(ordered.split([T // W + (1 if r < T % W else 0) for r in range(W)]))


def halo_conv2d(args, W):
    """87: the ranks' rows stacked into one image, each rank's convolution over all of it, that rank's rows."""
    image = torch.cat([f64(a[0]) for a in args], dim=2)
    rows = args[0][0].shape[2]
    outs = []
    for r, (_, weight, bias, stride, padding, _) in enumerate(args):
        y = torch.nn.functional.conv2d(image, f64(weight), f64(bias), stride=stride, padding=padding)
        outs.append(y[:, :, r * rows:(r + 1) * rows])
    return outs

"""Inputs for 62_torchharmonics_spherical_convolution, as PKB builds them, on a mesh of polar P = W / 2 by
azimuth 2 ranks: nlat = L latitudes and nlon = 2 L longitudes (rounded up to multiples of P and 2), in and out
the same. A rank holds x (B, C, nlat / P, nlon / 2), its block of the sphere; the filter psi of its latitude
band, a (K, nlat, nlat / P * nlon) sparse tensor given as psi_indices (3, nnz) int64 (PKB passes a sparse
COO tensor; the judge records dense tensors), psi_values (nnz,) normal times 0.05 and psi_size; a weight (C,
C, K) and a bias (C,), standard normal. Each rank draws its own values. Then groups 1, nlon_out = nlon_in =
nlon and the two groups.

The filter has 4 entries per (kernel, output latitude): input latitude (output latitude - first latitude of
this rank) mod nlat / P, longitudes output latitude + e * (kernel + 1) mod nlon for e = 0..3."""

import torch


def _round_up(n, m):
    return (n + m - 1) // m * m


def make_inputs(ctx, B, C, K, L):
    polar, azimuth = ctx.mesh["polar"], ctx.mesh["azimuth"]
    nlat = _round_up(L, polar)
    nlon = _round_up(2 * nlat, azimuth)
    lat_local, lon_local = nlat // polar, nlon // azimuth
    per_row = min(4, lat_local * nlon)
    first_lat = ctx.coords["polar"] * lat_local
    k, out_lat, e = torch.meshgrid(torch.arange(K), torch.arange(nlat), torch.arange(per_row), indexing="ij")
    column = ((out_lat - first_lat) % lat_local) * nlon + (out_lat + e * (k + 1)) % nlon
    indices = torch.stack([k.reshape(-1), out_lat.reshape(-1), column.reshape(-1)]).to(ctx.device)
    values = ctx.randn((indices.shape[1],), "psi_values", std=0.05)
    return (ctx.randn((B, C, lat_local, lon_local), "x"), indices, values, [K, nlat, lat_local * nlon],
            ctx.randn((C, C, K), "weight"), 1, nlon, nlon, ctx.groups["azimuth"], ctx.groups["polar"],
            ctx.randn((C,), "bias"))

"""The training cost estimate, one formula for the platform's run records and for ``wai.train``.

seconds / 3600 x the GPU's hourly list rate, to the cent, with the sentence that says where the
rate came from (docs/platform.md, "Cost"). The rates are ``GPU_USD_PER_HOUR`` in defaults.py.
"""

from __future__ import annotations

from whileai.defaults import GPU_PRICE_SOURCE, GPU_USD_PER_HOUR, SECONDS_PER_HOUR

__all__ = ["gpu_cost", "rate_of"]


def rate_of(device: str | None) -> tuple[str, float] | None:
    """The price-table GPU a device name is (``"NVIDIA A10G"`` is A10G) and its rate, or None."""
    if not device:
        return None
    words = device.upper().replace("-", " ").split()
    for gpu, rate in GPU_USD_PER_HOUR.items():
        if gpu.upper() == device.upper() or gpu.upper() in words:
            return gpu, rate
    return None


def gpu_cost(device: str | None, seconds: float | None, *, rate: float | None = None) -> tuple[float | None, str]:
    """``(cost_usd, cost_basis)``: seconds / 3600 x the rate, to the cent; None and the reason when unknown.

    Examples:
        >>> gpu_cost("A10G", 56)
        (0.02, 'estimate: A10G at $1.10/h, modal.com/pricing 2026-09-20')
        >>> gpu_cost("NVIDIA A10G", 1800, rate=1.0)
        (0.5, 'estimate: NVIDIA A10G at $1.00/h (given)')
        >>> gpu_cost("Z9", 56)[0] is None
        True
    """
    if device is None or seconds is None:
        return None, "no estimate: the run did not report its gpu and seconds; pass cost_usd= with your own figure."
    if rate is not None:
        return round(float(seconds) / SECONDS_PER_HOUR * float(rate), 2), f"estimate: {device} at ${float(rate):.2f}/h (given)"
    found = rate_of(device)
    if found is None:
        known = ", ".join(sorted(GPU_USD_PER_HOUR))
        return None, (f"no estimate: {device!r} is not in the price table ({known}; {GPU_PRICE_SOURCE}); "
                      "pass cost_usd= (or gpu_usd_per_hour=) with your own figure.")
    gpu, table_rate = found
    return round(float(seconds) / SECONDS_PER_HOUR * table_rate, 2), f"estimate: {gpu} at ${table_rate:.2f}/h, {GPU_PRICE_SOURCE}"

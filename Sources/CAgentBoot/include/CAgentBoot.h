#pragma once

/// Nonzero when this program can serve as its own background transfer
/// agent: the BackgroundAgent module is linked into it (it defines
/// `asyncurlsession_run_as_agent`), as in every program that depends on
/// the AsyncURLSession or URLSessionCompat product.
int asyncurlsession_self_agent_available(void);

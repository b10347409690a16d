"""Fakes of the scheduler's RPC peers for its unit tests."""


class ViewAPI:
    """Records what the relay casts to api workers."""

    def __init__(self):
        self.sent = []

    def update_service_capabilities(self, ctxt, service_host, capabilities,
                                    timestamp, fingerprint):
        self.sent.append(("update", service_host, timestamp, fingerprint))

    def renew_service_capabilities(self, ctxt, renewals):
        self.sent.append(("renew", renewals))

    def withdraw_service_capabilities(self, ctxt, service_host, timestamp):
        self.sent.append(("withdraw", service_host, timestamp))

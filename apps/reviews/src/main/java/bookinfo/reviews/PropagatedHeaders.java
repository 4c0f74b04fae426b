package bookinfo.reviews;

import java.util.List;

/**
 * Headers copied from the incoming request to the ratings call (docs/contract.md, "Everywhere").
 */
final class PropagatedHeaders {

    /** end-user matters most: Istio's fault-injection rules match "end-user: jason" on ratings. */
    static final List<String> NAMES =
            List.of(
                    "x-request-id",
                    "x-ot-span-context",
                    "x-datadog-trace-id",
                    "x-datadog-parent-id",
                    "x-datadog-sampling-priority",
                    "traceparent",
                    "tracestate",
                    "x-cloud-trace-context",
                    "grpc-trace-bin",
                    "x-b3-traceid",
                    "x-b3-spanid",
                    "x-b3-parentspanid",
                    "x-b3-sampled",
                    "x-b3-flags",
                    "b3",
                    "sw8",
                    "end-user",
                    "user-agent",
                    "cookie",
                    "authorization",
                    "jwt");

    private PropagatedHeaders() {}
}

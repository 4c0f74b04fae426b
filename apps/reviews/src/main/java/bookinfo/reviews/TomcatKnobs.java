package bookinfo.reviews;

import org.apache.catalina.core.StandardHost;
import org.springframework.boot.web.embedded.tomcat.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.stereotype.Component;

/**
 * What server.tomcat.* has no property for, set through Tomcat's public connector, engine and host
 * attributes: TCP_NODELAY (HTTP_NODELAY), TRACE reaching Spring MVC, the overall request-head
 * deadline (HTTP_HEADER_TIMEOUT_SECONDS, HeadDeadlineProtocol), HTTP/0.9 refused (Http09Refusal),
 * and the JSON error report for requests Tomcat rejects before any servlet runs.
 */
@Component
class TomcatKnobs implements WebServerFactoryCustomizer<TomcatServletWebServerFactory> {

    private final ReviewsConfig config;

    TomcatKnobs(ReviewsConfig config) {
        this.config = config;
    }

    @Override
    public void customize(TomcatServletWebServerFactory factory) {
        // Tomcat's NIO HTTP/1.1 handler plus a deadline for the whole request head.
        factory.setProtocol(HeadDeadlineProtocol.class.getName());
        factory.addConnectorCustomizers(
                connector -> {
                    // The HTTP connector's tcpNoDelay attribute: TCP_NODELAY on every accepted
                    // socket.
                    connector.setProperty("tcpNoDelay", Boolean.toString(config.httpNoDelay()));
                    // Let TRACE reach Spring MVC, which answers it 405/404 like any other unserved
                    // method.
                    connector.setAllowTrace(true);
                    if (connector.getProtocolHandler() instanceof HeadDeadlineProtocol protocol) {
                        protocol.setHeadTimeoutMillis(config.httpHeaderTimeoutSeconds() * 1000L);
                    }
                });
        factory.addEngineValves(new Http09Refusal());
        factory.addContextCustomizers(
                context -> {
                    if (context.getParent() instanceof StandardHost host) {
                        host.setErrorReportValveClass(JsonErrorReportValve.class.getName());
                    }
                });
    }
}

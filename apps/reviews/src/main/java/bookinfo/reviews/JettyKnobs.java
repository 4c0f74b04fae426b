package bookinfo.reviews;

import org.eclipse.jetty.http.HttpCompliance;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.ServerConnector;
import org.springframework.boot.web.embedded.jetty.JettyServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.stereotype.Component;

/**
 * What server.jetty.* has no property for, set through Jetty's public connector and HTTP
 * configuration: TCP_NODELAY (HTTP_NODELAY), keep-alive off (HTTP_KEEPALIVE=false), the listen
 * backlog, strict RFC 7230/9112 parsing, no Server header, the overall request-head deadline
 * (HTTP_HEADER_TIMEOUT_SECONDS, HeadDeadline), and the JSON error for requests Jetty refuses before
 * any servlet runs (JsonErrorHandler).
 */
@Component
class JettyKnobs implements WebServerFactoryCustomizer<JettyServletWebServerFactory> {

    /** Beyond HTTP_MAX_CONNECTIONS new connections wait in a listen backlog this long. */
    static final int ACCEPT_QUEUE = 1024;

    private final ReviewsConfig config;

    JettyKnobs(ReviewsConfig config) {
        this.config = config;
    }

    @Override
    public void customize(JettyServletWebServerFactory factory) {
        factory.addServerCustomizers(
                server -> {
                    for (Connector connector : server.getConnectors()) {
                        if (connector instanceof ServerConnector sc) {
                            // TCP_NODELAY on every accepted socket (Jetty's default is on).
                            sc.setAcceptedTcpNoDelay(config.httpNoDelay());
                            sc.setAcceptQueueSize(ACCEPT_QUEUE);
                        }
                        HttpConnectionFactory http =
                                connector.getConnectionFactory(HttpConnectionFactory.class);
                        if (http != null) {
                            HttpConfiguration c = http.getHttpConfiguration();
                            // Jetty's strictest mode (RFC 7230's rules, which RFC 9112 keeps),
                            // stated rather than inherited: obs-fold, Content-Length beside
                            // Transfer-Encoding, a repeated Content-Length, ... are a 400, HTTP/0.9
                            // a 505, each with the connection closed.
                            c.setHttpCompliance(HttpCompliance.RFC7230);
                            // false: "Connection: close" on every response, then the close.
                            c.setPersistentConnectionsEnabled(config.httpKeepAlive());
                            c.setSendServerVersion(false);
                            c.setSendXPoweredBy(false);
                        }
                    }
                    server.setErrorHandler(new JsonErrorHandler());
                    HeadDeadline.install(
                            server,
                            config.httpHeaderTimeoutSeconds() * 1000L,
                            config.httpKeepAliveTimeoutSeconds() * 1000L);
                });
    }
}

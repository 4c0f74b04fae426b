package bookinfo.reviews.serving;

import bookinfo.reviews.ReviewsConfig;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.QoSHandler;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.springframework.boot.web.embedded.jetty.JettyServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.stereotype.Component;

/**
 * What server.jetty.* has no property for, through Jetty's public connector and HTTP configuration:
 * HTTP_NODELAY, HTTP_KEEPALIVE=false, the listen backlog, the send buffer, idle threads' end,
 * /metrics renders at once, the head deadline and the JSON error for requests Jetty refuses itself.
 */
@Component
class JettyKnobs implements WebServerFactoryCustomizer<JettyServletWebServerFactory> {

    /** Beyond HTTP_MAX_CONNECTIONS new connections wait in a listen backlog this long. */
    static final int ACCEPT_QUEUE = 1024;

    /** Idle threads ended per idle-timeout (Jetty: one); DESIGN.md, "Memory after hostile load". */
    static final int EVICT_PER_IDLE_TIMEOUT = 100;

    /** SO_SNDBUF of accepted sockets (Linux doubles it) instead of autotuning up to 4 MiB. */
    static final int SEND_BUFFER = 64 * 1024;

    /** Scrapes /metrics renders at once (QoSHandler): DESIGN.md, "A crowd of scrapes". */
    static final int SCRAPES_AT_ONCE = 2;

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
                            sc.setAcceptedTcpNoDelay(config.httpNoDelay());
                            sc.setAcceptQueueSize(ACCEPT_QUEUE);
                            sc.setAcceptedSendBufferSize(SEND_BUFFER);
                        }
                        HttpConnectionFactory http =
                                connector.getConnectionFactory(HttpConnectionFactory.class);
                        if (http != null) {
                            http.getHttpConfiguration()
                                    .setPersistentConnectionsEnabled(config.httpKeepAlive());
                        }
                    }
                    if (server.getThreadPool() instanceof QueuedThreadPool pool) {
                        pool.setMaxEvictCount(EVICT_PER_IDLE_TIMEOUT);
                    }
                    server.setErrorHandler(new JsonErrors.Jetty());
                    QoSHandler scrapes = new QoSHandler(server.getHandler());
                    scrapes.includePath("/metrics");
                    scrapes.setMaxRequestCount(SCRAPES_AT_ONCE);
                    scrapes.setMaxSuspendedRequestCount(config.httpMaxConnections());
                    server.setHandler(scrapes);
                    HeadDeadline.install(
                            server,
                            config.httpHeaderTimeoutSeconds() * 1000L,
                            config.httpKeepAliveTimeoutSeconds() * 1000L);
                });
    }
}

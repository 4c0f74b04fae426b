package bookinfo.reviews;

import java.net.InetAddress;
import java.net.UnknownHostException;
import org.apache.catalina.core.StandardHost;
import org.apache.coyote.http11.AbstractHttp11Protocol;
import org.springframework.boot.web.server.ErrorPage;
import org.springframework.boot.web.server.Shutdown;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.boot.web.embedded.tomcat.TomcatServletWebServerFactory;
import org.springframework.core.Ordered;
import org.springframework.stereotype.Component;

/**
 * Applies the inbound HTTP knobs to Tomcat's connector. Runs after Spring Boot's own customizers
 * (lowest precedence), so server.* defaults such as max-keep-alive-requests=100 never win.
 */
@Component
class TomcatKnobs implements WebServerFactoryCustomizer<TomcatServletWebServerFactory>, Ordered {

    /** Enough worker threads for 400 concurrent in-flight requests (each may wait on ratings). */
    static final int MAX_THREADS = 400;
    static final int ACCEPT_BACKLOG = 1024;
    static final int MAX_CONNECTIONS = 8192;

    private final ReviewsConfig config;

    TomcatKnobs(ReviewsConfig config) {
        this.config = config;
    }

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }

    @Override
    public void customize(TomcatServletWebServerFactory factory) {
        factory.setPort(config.port());
        try {
            factory.setAddress(InetAddress.getByName(config.listenAddress()));
        } catch (UnknownHostException e) {
            throw new IllegalStateException("LISTEN_ADDRESS was validated at start", e);
        }
        factory.setShutdown(Shutdown.GRACEFUL);
        factory.setProtocol(DrainableNio2Protocol.class.getName());
        factory.addErrorPages(new ErrorPage(JsonErrorController.PATH));
        factory.addContextCustomizers(context -> {
            if (context.getParent() instanceof StandardHost host) {
                host.setErrorReportValveClass(JsonErrorReportValve.class.getName());
            }
        });
        factory.addConnectorCustomizers(connector -> {
            // Let TRACE reach Spring MVC, which answers it 405/404 like any other unserved method.
            connector.setAllowTrace(true);
            AbstractHttp11Protocol<?> http = (AbstractHttp11Protocol<?>) connector.getProtocolHandler();
            http.setTcpNoDelay(config.httpNoDelay());
            // 1 makes Tomcat send "Connection: close" and close after each response; -1 is unlimited,
            // so kept-alive connections are never retired after a fixed number of requests.
            http.setMaxKeepAliveRequests(config.httpKeepAlive() ? -1 : 1);
            http.setKeepAliveTimeout(config.httpKeepAliveTimeoutSeconds() * 1000);
            http.setMaxThreads(MAX_THREADS);
            http.setAcceptCount(ACCEPT_BACKLOG);
            http.setMaxConnections(MAX_CONNECTIONS);
        });
    }
}

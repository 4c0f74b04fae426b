package bookinfo.reviews;

import org.apache.catalina.core.StandardHost;
import org.springframework.boot.web.embedded.tomcat.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.stereotype.Component;

/**
 * What server.tomcat.* has no property for, set through Tomcat's public connector and host
 * attributes: TCP_NODELAY (HTTP_NODELAY), TRACE reaching Spring MVC, and the JSON error report
 * for requests Tomcat rejects before any servlet runs.
 */
@Component
class TomcatKnobs implements WebServerFactoryCustomizer<TomcatServletWebServerFactory> {

    private final ReviewsConfig config;

    TomcatKnobs(ReviewsConfig config) {
        this.config = config;
    }

    @Override
    public void customize(TomcatServletWebServerFactory factory) {
        factory.addConnectorCustomizers(connector -> {
            // The HTTP connector's tcpNoDelay attribute: TCP_NODELAY on every accepted socket.
            connector.setProperty("tcpNoDelay", Boolean.toString(config.httpNoDelay()));
            // Let TRACE reach Spring MVC, which answers it 405/404 like any other unserved method.
            connector.setAllowTrace(true);
        });
        factory.addContextCustomizers(context -> {
            if (context.getParent() instanceof StandardHost host) {
                host.setErrorReportValveClass(JsonErrorReportValve.class.getName());
            }
        });
    }
}

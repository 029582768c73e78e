package io.github.sessiond.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/**
 * A TCP proxy to {@code host:port} that forwards until {@link #freeze()}: from
 * then on its open connections carry nothing, both ways, and stay open (no
 * FIN, no RST), as a connection does when the server's host is lost or a NAT
 * drops it. New connections are forwarded as before.
 */
final class FreezingProxy implements AutoCloseable {
  private final ServerSocket listener;
  private final String host;
  private final int port;
  private final List<Link> links = new ArrayList<>();
  private int accepted;

  /** One proxied connection; frozen is read and set under the proxy's lock. */
  private static final class Link {
    final Socket client;
    final Socket upstream;
    boolean frozen;

    Link(Socket client, Socket upstream) {
      this.client = client;
      this.upstream = upstream;
    }
  }

  FreezingProxy(String target) throws IOException {
    int colon = target.lastIndexOf(':');
    host = target.substring(0, colon);
    port = Integer.parseInt(target.substring(colon + 1));
    listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread t = new Thread(this::serve, "freezing-proxy");
    t.setDaemon(true);
    t.start();
  }

  /** The proxy's address, host:port. */
  String address() {
    return "127.0.0.1:" + listener.getLocalPort();
  }

  private void serve() {
    while (true) {
      Socket c;
      Socket up;
      try {
        c = listener.accept();
      } catch (IOException e) {
        return;
      }
      try {
        up = new Socket();
        up.connect(new InetSocketAddress(host, port));
      } catch (IOException e) {
        closeQuietly(c);
        continue;
      }
      Link l = new Link(c, up);
      synchronized (this) {
        accepted++;
        links.add(l);
      }
      pipe(l, c, up);
      pipe(l, up, c);
    }
  }

  private void pipe(Link l, Socket from, Socket to) {
    Thread t =
        new Thread(
            () -> {
              byte[] buf = new byte[32 * 1024];
              try (InputStream in = from.getInputStream()) {
                OutputStream out = to.getOutputStream();
                for (int n; (n = in.read(buf)) >= 0; ) {
                  boolean drop;
                  synchronized (this) {
                    drop = l.frozen;
                  }
                  if (!drop) { // dropped: the peer sees silence, not an error
                    out.write(buf, 0, n);
                    out.flush();
                  }
                }
              } catch (IOException e) {
                // the connection ended
              }
            },
            "freezing-proxy-pipe");
    t.setDaemon(true);
    t.start();
  }

  /** Every open connection goes silent. */
  synchronized void freeze() {
    for (Link l : links) {
      l.frozen = true;
    }
  }

  /** How many connections the proxy has accepted. */
  synchronized int accepted() {
    return accepted;
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // already gone
    }
  }

  @Override
  public synchronized void close() throws IOException {
    listener.close();
    for (Link l : links) {
      closeQuietly(l.client);
      closeQuietly(l.upstream);
    }
  }
}

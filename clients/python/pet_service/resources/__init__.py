"""The resource namespaces of ``PetService``, one module each (as clients/typescript/src/resources/)."""

from ._resource import NOT_GIVEN
from .account import AccountResource
from .events import Events
from .orders import Orders
from .pets import Pets
from .request_logs import RequestLogs
from .users import Users
from .webhook_endpoints import WebhookEndpoints

__all__ = ["NOT_GIVEN", "AccountResource", "Events", "Orders", "Pets", "RequestLogs", "Users", "WebhookEndpoints"]

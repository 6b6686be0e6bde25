/** Paths of the carrier's operations, relative to their documented addresses. */
export const OPERATION_PATHS = {
  tracking: '/api/Order/v1/Tracking',
  price: '/Api/Customer/GetPriceForCustomerAPI',
  images: '/Api/Customer/GetOrderImages',
} as const;
